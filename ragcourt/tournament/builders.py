"""Build the pairwise judge ``tournament.judge`` names.

Importing this module imports the built-in kinds (:mod:`~ragcourt.tournament.llm_judge`,
:mod:`~ragcourt.tournament.correctness_margin`), whose decorators register them in
:data:`~ragcourt.tournament.pairwise.PAIRWISE_JUDGES`.
"""

from __future__ import annotations

from ragcourt.judging.vocabulary import JudgeContext
from ragcourt.tournament import correctness_margin, llm_judge
from ragcourt.tournament.pairwise import PAIRWISE_JUDGES, PairwiseJudge

BUILTIN_MODULES = (llm_judge, correctness_margin)  # registered on import


def build_pairwise_judge(kind: str, ctx: JudgeContext) -> PairwiseJudge:
    """The pairwise judge of ``kind`` (one-line ConfigError naming ``tournament.judge``)."""
    return PAIRWISE_JUDGES.get(kind, "tournament.judge")(ctx)
