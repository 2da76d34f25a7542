"""Reusable QA-quality judges (SPEC 2) and duplicate-question detection.

Three LLM judges, each asked through the gateway's ``structured`` call for a tiny JSON reply
``{"reason": "...", "score": ...}`` (reason first, so the score follows the argument):

* answerability(question, context) -> 0 or 1: all facts needed are in the context;
* faithfulness(answer, context)    -> 0..1: share of the answer's claims stated in the context;
* relevance(question, answer)      -> 0..1: how directly the answer responds to the question.

A model or parse failure is returned as a :class:`JudgeOutcome` with ``error`` set and no score,
never as an invented value. Duplicates: *exact* = equal after :func:`normalize_question`;
*near* = cosine similarity of L2-normalised question embeddings >= a threshold.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from pydantic import BaseModel, Field, field_validator

from ragcourt.core.prompts import prompt
from ragcourt.llm.types import ChatRequest, StructuredResult

if TYPE_CHECKING:
    from ragcourt.llm import Gateway

PROMPT_AREA = "qagen"
JudgeName = Literal["answerability", "faithfulness", "relevance"]
JUDGES: tuple[JudgeName, ...] = ("answerability", "faithfulness", "relevance")


# The JSON schema (not the validation) caps the reason, so a grammar-constrained local model
# closes the string instead of running into max_tokens with half a JSON object.
REASON_FIELD: Any = Field(json_schema_extra={"maxLength": 200})


class ScoreVerdict(BaseModel):
    """Graded judge reply: a one-sentence reason, then a score in [0, 1]."""

    reason: str = REASON_FIELD
    score: float = Field(ge=0.0, le=1.0)


_YES = {"1", "yes", "true", "answerable"}
_NO = {"0", "no", "false", "unanswerable", "not answerable"}


class BinaryVerdict(BaseModel):
    """Binary judge reply: a one-sentence reason, then 0 or 1.

    Accepts the spellings small models produce for the same value (``true``/``"yes"``/``1.0``);
    anything else (e.g. ``0.7``) is a parse failure, not silently rounded.
    """

    reason: str = REASON_FIELD
    score: Literal[0, 1]

    @field_validator("score", mode="before")
    @classmethod
    def _coerce(cls, v: Any) -> Any:
        if isinstance(v, bool):
            return int(v)
        if isinstance(v, float) and v in (0.0, 1.0):
            return int(v)
        if isinstance(v, str):
            s = v.strip().strip(".").casefold()
            if s in _YES:
                return 1
            if s in _NO:
                return 0
        return v


@dataclass(frozen=True)
class JudgeOutcome:
    """One judge's result for one item: ``score``/``reason`` when ok, else ``error`` + ``raw``."""

    judge: str
    score: float | None
    reason: str | None
    error: str | None = None
    raw: str = ""
    model: str = ""

    @property
    def ok(self) -> bool:
        return self.error is None and self.score is not None

    def passes(self, threshold: float) -> bool:
        """True iff the judge succeeded and ``score >= threshold``."""
        return self.ok and self.score is not None and self.score >= threshold


@dataclass(frozen=True)
class JudgeSettings:
    """Sampling settings and prompt location shared by the three judges."""

    model: str
    prompt_version: str = "v1"
    prompts_dir: Path | None = None
    temperature: float = 0.0
    seed: int | None = 0
    max_tokens: int = 160


def _requests(
    judge: JudgeName, fields: Sequence[dict[str, str]], cfg: JudgeSettings
) -> list[ChatRequest]:
    system = prompt(PROMPT_AREA, f"{judge}_system", cfg.prompt_version, cfg.prompts_dir)
    user = prompt(PROMPT_AREA, f"{judge}_user", cfg.prompt_version, cfg.prompts_dir)
    return [
        ChatRequest.of(
            cfg.model,
            system,
            user.format(**f),
            max_tokens=cfg.max_tokens,
            temperature=cfg.temperature,
            seed=cfg.seed,
            json_mode=True,
            tag=f"{PROMPT_AREA}.{judge}",
        )
        for f in fields
    ]


def _outcomes(
    judge: JudgeName, results: Sequence[StructuredResult[Any]], model: str
) -> list[JudgeOutcome]:
    out: list[JudgeOutcome] = []
    for r in results:
        if r.ok and r.value is not None:
            v = r.value
            out.append(JudgeOutcome(judge, float(v.score), v.reason.strip(), None, r.raw, model))
        else:
            err = r.error or "judge returned no value"
            out.append(JudgeOutcome(judge, None, None, err, r.raw, model))
    return out


def _run(
    gw: Gateway,
    judge: JudgeName,
    fields: Sequence[dict[str, str]],
    cfg: JudgeSettings,
    desc: str | None,
) -> list[JudgeOutcome]:
    if not fields:
        return []
    schema: type[BaseModel] = BinaryVerdict if judge == "answerability" else ScoreVerdict
    results = gw.structured(_requests(judge, fields, cfg), schema, desc=desc or judge)
    return _outcomes(judge, results, cfg.model)


def _same_length(a: Sequence[str], b: Sequence[str], what: str) -> None:
    if len(a) != len(b):
        raise ValueError(f"{what}: got {len(a)} and {len(b)} items")


def judge_answerability(
    gw: Gateway,
    questions: Sequence[str],
    contexts: Sequence[str],
    cfg: JudgeSettings,
    desc: str | None = None,
) -> list[JudgeOutcome]:
    """Answerability (0/1): can each question be answered from its context alone?"""
    _same_length(questions, contexts, "answerability questions/contexts")
    fields = [{"question": q, "context": c} for q, c in zip(questions, contexts, strict=True)]
    return _run(gw, "answerability", fields, cfg, desc)


def judge_faithfulness(
    gw: Gateway,
    answers: Sequence[str],
    contexts: Sequence[str],
    cfg: JudgeSettings,
    desc: str | None = None,
) -> list[JudgeOutcome]:
    """Faithfulness (0-1): share of each answer's claims stated in its context."""
    _same_length(answers, contexts, "faithfulness answers/contexts")
    fields = [{"answer": a, "context": c} for a, c in zip(answers, contexts, strict=True)]
    return _run(gw, "faithfulness", fields, cfg, desc)


def judge_relevance(
    gw: Gateway,
    questions: Sequence[str],
    answers: Sequence[str],
    cfg: JudgeSettings,
    desc: str | None = None,
) -> list[JudgeOutcome]:
    """Answer relevance (0-1): how directly each answer responds to its question."""
    _same_length(questions, answers, "relevance questions/answers")
    fields = [{"question": q, "answer": a} for q, a in zip(questions, answers, strict=True)]
    return _run(gw, "relevance", fields, cfg, desc)


# --- self-contained questions --------------------------------------------------------------

_POINTS_AT_CONTEXT = re.compile(
    r"\b(?:the|this|that|above|given|following|provided)\s+"
    r"(?:text|passage|context|paragraph|excerpt)s?\b|\bthis\s+question\b",
    re.IGNORECASE,
)


def not_standalone_reason(question: str) -> str | None:
    """Why ``question`` is not self-contained, or None.

    SPEC 2 asks for a specific, unambiguous question: one that points at "the text" / "this
    passage" (or asks about "this question") cannot be asked by a user who has not seen the
    context, so it is rejected before any answer or judge call. A lexical rule, not a model.
    """
    m = _POINTS_AT_CONTEXT.search(question)
    if m is None:
        return None
    return f"refers to '{m.group(0)}', so it only makes sense next to the context"


# --- duplicate questions -------------------------------------------------------------------

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
