"""``correctness_mode: rubric``: the RAGalyst 0-1 rubric, JSON rationale then score, one chat
call per answer (:func:`ragcourt.judging.correctness.grade_correctness`, spec §5)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ragcourt.judging.correctness import grade_correctness
from ragcourt.judging.vocabulary import (
    CORRECTNESS_GRADERS,
    AnswerItem,
    CorrectnessGrade,
    JudgeContext,
    VerdictsOf,
)


@dataclass
class RubricGrader:
    """``rubric``: the RAGalyst 0-1 rubric, JSON rationale then score (one chat call each)."""

    ctx: JudgeContext

    def grade(self, items: Sequence[AnswerItem], verdicts_of: VerdictsOf) -> list[CorrectnessGrade]:
        jp, llm = self.ctx.params.judge, self.ctx.params.llm
        model = llm.resolve(jp.correctness_model)
        return grade_correctness(
            items, self.ctx.gateway, model, jp.prompt_version, llm.temperature, llm.seed
        )


@CORRECTNESS_GRADERS.register("rubric")
def _rubric(ctx: JudgeContext) -> RubricGrader:
    return RubricGrader(ctx)
