"""``correctness_mode: trained``: no LLM; the max over references of the trained correctness
score (:mod:`ragcourt.judging.trained_correctness`), in [0, 1]."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ragcourt.judging.trained_correctness import trained_reference_scores
from ragcourt.judging.vocabulary import (
    CORRECTNESS_GRADERS,
    AnswerItem,
    CorrectnessGrade,
    JudgeContext,
    VerdictsOf,
)
from ragcourt.retrieval.trained_judges.judges import TrainedJudges


@dataclass
class TrainedGrader:
    """``trained``: the trained correctness judge's score (no LLM)."""

    judges: TrainedJudges

    def grade(self, items: Sequence[AnswerItem], verdicts_of: VerdictsOf) -> list[CorrectnessGrade]:
        out: list[CorrectnessGrade] = []
        for score, idx in trained_reference_scores(self.judges, items):
            if idx < 0:
                out.append(CorrectnessGrade(None, "", "no reference answer"))
            else:
                out.append(
                    CorrectnessGrade(
                        score, f"trained correctness {score:.3f} (reference {idx + 1})"
                    )
                )
        return out


@CORRECTNESS_GRADERS.register("trained")
def _trained(ctx: JudgeContext) -> TrainedGrader:
    return TrainedGrader(ctx.trained_judges)
