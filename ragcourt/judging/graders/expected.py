"""``correctness_mode: expected``: E[rubric level] from the next-token distribution over the
digits 0-4 (:func:`ragcourt.judging.correctness.grade_correctness_expected`, spec §5)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ragcourt.judging.correctness import grade_correctness_expected
from ragcourt.judging.vocabulary import (
    CORRECTNESS_GRADERS,
    AnswerItem,
    CorrectnessGrade,
    JudgeContext,
    VerdictsOf,
)


@dataclass
class ExpectedGrader:
    """``expected``: E[rubric level] from the next-token distribution over the digits 0-4."""

    ctx: JudgeContext

    def grade(self, items: Sequence[AnswerItem], verdicts_of: VerdictsOf) -> list[CorrectnessGrade]:
        jp, llm = self.ctx.params.judge, self.ctx.params.llm
        model = llm.resolve(jp.correctness_model)
        return grade_correctness_expected(
            items, self.ctx.gateway, model, jp.prompt_version, llm.seed, jp.reason, llm.temperature
        )


@CORRECTNESS_GRADERS.register("expected")
def _expected(ctx: JudgeContext) -> ExpectedGrader:
    return ExpectedGrader(ctx)
