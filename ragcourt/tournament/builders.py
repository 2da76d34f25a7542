"""Build the pairwise judge ``tournament.judge`` names.

:data:`~ragcourt.tournament.pairwise.PAIRWISE_JUDGES` imports its built-in kinds
(:mod:`~ragcourt.tournament.llm_judge`, :mod:`~ragcourt.tournament.correctness_margin`) and the
entry-point plug-ins on first lookup.
"""

from __future__ import annotations

from ragcourt.judging.vocabulary import JudgeContext
from ragcourt.tournament.pairwise import PAIRWISE_JUDGES, PairwiseJudge


def build_pairwise_judge(kind: str, ctx: JudgeContext) -> PairwiseJudge:
    """The pairwise judge of ``kind`` (one-line ConfigError naming ``tournament.judge``), its
    ``tournament.judge_settings`` checked against the kind's settings model first."""
    factory = PAIRWISE_JUDGES.get(kind, "tournament.judge")
    given = ctx.params.tournament.judge_settings
    PAIRWISE_JUDGES.settings(kind, given, "tournament.judge_settings")
    return factory(ctx)
