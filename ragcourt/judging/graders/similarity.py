"""``correctness_mode: similarity``: no LLM; the clipped max cosine of the answer to a reference
under the embedding_similarity judge ``judge.correctness_judge``
(:func:`ragcourt.judging.correctness.similarity_correctness`, spec §5)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ragcourt.judging.correctness import similarity_correctness
from ragcourt.judging.vocabulary import (
    CORRECTNESS_GRADERS,
    AnswerItem,
    CorrectnessGrade,
    JudgeContext,
    VerdictsOf,
)


@dataclass
class SimilarityGrader:
    """``similarity``: clipped max cosine from the verdicts of ``judge.correctness_judge``
    (an embedding_similarity judge; no LLM)."""

    judge: str

    def grade(self, items: Sequence[AnswerItem], verdicts_of: VerdictsOf) -> list[CorrectnessGrade]:
        return similarity_correctness(verdicts_of(self.judge))


@CORRECTNESS_GRADERS.register("similarity")
def _similarity(ctx: JudgeContext) -> SimilarityGrader:
    return SimilarityGrader(ctx.params.judge.correctness_judge)
