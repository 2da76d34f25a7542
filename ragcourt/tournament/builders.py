"""Build the pairwise judge ``tournament.judge`` names.

:data:`~ragcourt.tournament.pairwise.PAIRWISE_JUDGES` imports its built-in kinds
(:mod:`~ragcourt.tournament.llm_judge`, :mod:`~ragcourt.tournament.correctness_margin`) and the
entry-point plug-ins on first lookup.
"""

from __future__ import annotations

from ragcourt.tournament.pairwise import (
    PAIRWISE_JUDGES,
    PairwiseContext,
    PairwiseJudge,
    judge_settings,
)


def build_pairwise_judge(kind: str | None, ctx: PairwiseContext) -> PairwiseJudge:
    """The pairwise judge of ``kind`` (None: the registry's default; one-line ConfigError
    naming ``tournament.judge``), its ``tournament.judge_settings`` checked against the kind's
    settings model first."""
    kind = PAIRWISE_JUDGES.resolve(kind, "tournament.judge")
    factory = PAIRWISE_JUDGES.get(kind, "tournament.judge")
    judge_settings(kind, ctx.params)
    return factory(ctx)
