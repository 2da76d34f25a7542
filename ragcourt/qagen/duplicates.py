"""Duplicate-question detection for QA generation (spec §2).

*Exact* duplicate: equal after :func:`normalize_question` (NFKC, case-folded, punctuation and
spacing removed). *Near* duplicate: cosine similarity of L2-normalised question embeddings
>= a threshold, against every question kept so far.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

_NON_WORD = re.compile(r"[^\w]+")


def normalize_question(text: str) -> str:
    """Key for exact-duplicate detection: NFKC, case-folded, punctuation and spacing removed."""
    norm = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(_NON_WORD.sub(" ", norm).split())


@dataclass(frozen=True)
class DuplicateHit:
    """Why a question is a duplicate: of which kept question, and the cosine similarity."""

    kind: Literal["exact_duplicate", "near_duplicate"]
    of_id: str
    similarity: float

    @property
    def reason(self) -> str:
        if self.kind == "exact_duplicate":
            return f"same question as {self.of_id} after normalisation"
        return f"cosine similarity {self.similarity:.3f} to {self.of_id}"


@dataclass
class DuplicateIndex:
    """The questions kept so far; ``check`` a new one against them before ``add``-ing it.

    Embeddings must be L2-normalised (as ``ragcourt.retrieval.embedders.encode`` returns), so the
    dot product is the cosine similarity. Near duplicate: max cosine >= ``threshold``.
    """

    threshold: float
    _keys: dict[str, str] = field(default_factory=dict)
    _ids: list[str] = field(default_factory=list)
    _vectors: list[np.ndarray] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self._ids)

    def check(self, question: str, embedding: np.ndarray) -> DuplicateHit | None:
        key = normalize_question(question)
        if key in self._keys:
            return DuplicateHit("exact_duplicate", self._keys[key], 1.0)
        if not self._vectors:
            return None
        sims = np.stack(self._vectors) @ np.asarray(embedding, dtype=np.float32)
        best = int(np.argmax(sims))
        if float(sims[best]) >= self.threshold:
            return DuplicateHit("near_duplicate", self._ids[best], float(sims[best]))
        return None

    def add(self, question_id: str, question: str, embedding: np.ndarray) -> None:
        self._keys.setdefault(normalize_question(question), question_id)
        self._ids.append(question_id)
        self._vectors.append(np.asarray(embedding, dtype=np.float32))
