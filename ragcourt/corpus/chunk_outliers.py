"""Documents that chunk into far more chunks than their size predicts.

Expected chunks of a document: ``ceil((T - overlap) / (size - overlap))`` (at least 1), where
T is the document's token count, measured as the tokens of each chunk's part not shared with
the previous chunk. Prose gives about 1.0-1.1 times that (demo corpus: 1.00-1.12). A document
is an outlier when it has more than ``RATIO`` times (and ``SLACK`` more than) the expected
chunks, or when it holds a run without whitespace longer than ``RUN_CHARS_PER_TOKEN * size``
characters: such a run has no separator to split at, so the splitter cuts it character by
character (a 20 MB single-token file becomes ~89k chunks that way).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence

from pydantic import BaseModel, ConfigDict

from ragcourt.corpus.params import ChunkSpec

RATIO = 2.0
SLACK = 2
RUN_CHARS_PER_TOKEN = 8
_UNBROKEN = re.compile(r"\S+")


class ChunkOutlier(BaseModel):
    """One document whose chunk count is out of line with its length."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    doc_id: str
    path: str
    n_chars: int
    n_tokens: int
    n_chunks: int
    expected_chunks: int
    longest_unbroken_run: int
    reasons: list[str]

    def warning(self, chunking: str) -> str:
        """The one-line warning naming the document and its numbers."""
        return (
            f"chunk {chunking}: document {self.doc_id} ({self.path}) made {self.n_chunks} "
            f"chunks, expected ~{self.expected_chunks} from {self.n_tokens} tokens in "
            f"{self.n_chars} chars ({'; '.join(self.reasons)})"
        )


def longest_unbroken_run(text: str) -> int:
    """Length of the longest run of non-whitespace characters in ``text``."""
    return max((m.end() - m.start() for m in _UNBROKEN.finditer(text)), default=0)


def expected_chunks(n_tokens: int, spec: ChunkSpec) -> int:
    """``ceil((T - overlap) / (size - overlap))``, at least 1."""
    return max(1, math.ceil((n_tokens - spec.overlap) / (spec.size - spec.overlap)))


def find_outlier(
    doc_id: str,
    path: str,
    text: str,
    spans: Sequence[tuple[int, int]],
    spec: ChunkSpec,
    count: Callable[[str], int],
) -> ChunkOutlier | None:
    """The outlier record for one chunked document, or None when its chunk count is normal."""
    n_tokens, prev_end = 0, 0
    for start, end in spans:
        n_tokens += count(text[max(start, prev_end) : end]) if end > prev_end else 0
        prev_end = max(prev_end, end)
    expected = expected_chunks(n_tokens, spec)
    run = longest_unbroken_run(text)
    reasons = []
    if len(spans) > RATIO * expected and len(spans) > expected + SLACK:
        reasons.append(f"{len(spans) / expected:.1f}x the expected chunk count")
    if len(spans) > 1 and run > RUN_CHARS_PER_TOKEN * spec.size:
        reasons.append(f"a {run}-char run without whitespace is cut character by character")
    if not reasons:
        return None
    return ChunkOutlier(
        doc_id=doc_id,
        path=path,
        n_chars=len(text),
        n_tokens=n_tokens,
        n_chunks=len(spans),
        expected_chunks=expected,
        longest_unbroken_run=run,
        reasons=reasons,
    )
