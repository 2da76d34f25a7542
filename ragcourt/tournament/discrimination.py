"""The tournament's discrimination check: the Swiss Elo gap of every pair of known
order (:func:`ragcourt.core.control_kinds.known_pairs`) with its bootstrap interval.

Per pair (better, worse): ``win_rate`` = mean over valid judgements of better's per-question
score (DICE scores sum to 1, so 0.5 = no preference); ``elo_gap`` = Elo(better) − Elo(worse)
of the Swiss ratings, its interval the percentile interval of the same difference over the
bootstrap replicates (:func:`ragcourt.tournament.bootstrap.elo_replicates`, the resamples of
the leaderboard's CIs); the verdict follows :func:`ragcourt.judging.discrimination.verdict`.
A pair the schedules did not play is judged for the check (``judge_calls_executed``; those
rows are not in pairwise.parquet). ``resolvable_elo_gap`` = median over all system pairs
i < j of the half-width (hi − lo) / 2 of the bootstrap interval of Elo_i − Elo_j: gaps much
smaller than this are within the run's noise at its question count.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ragcourt.core.control_kinds import NO_CONTROLS, known_pairs
from ragcourt.core.fixed_model import FixedModel
from ragcourt.core.intervals import percentile_interval
from ragcourt.judging.discrimination import (
    CHECKED,
    KnownPair,
    count_verdicts,
    known_pair_fields,
    verdict,
)
from ragcourt.tournament.memo import JudgementMemo
from ragcourt.tournament.swiss import Pair

RESOLVABLE_NOTE = (
    "median over all system pairs of the half-width of the 95% bootstrap interval of their "
    "Swiss Elo gap; smaller gaps are not resolved at this question count"
)


class EloPair(KnownPair):
    """One pair of known order: judged win rate, Elo gap, its interval and the verdict."""

    questions: int  # valid judgements
    errors: int
    win_rate: float | None
    elo_gap: float
    elo_gap_lo: float | None
    elo_gap_hi: float | None
    verdict: str


class TournamentDiscrimination(FixedModel):
    """``discrimination`` of the tournament summary."""

    status: str  # "checked" or "no controls: validity not checked"
    controls: dict[str, str]
    pairs: list[EloPair]
    separated: int
    reversed: int
    not_separated: int
    not_checked: int
    resolvable_elo_gap: float | None
    resolvable_note: str
    judge_calls_executed: int  # order-judgements run only for the check (pairs not played)


def resolvable_gap(replicates: np.ndarray) -> float | None:
    """Median over pairs i < j of the half-width of the percentile interval of Elo_i − Elo_j
    over the (n_boot, N) replicates; None with fewer than 2 systems or no replicates."""
    n_boot, n = replicates.shape
    if n_boot == 0 or n < 2:
        return None
    widths = []
    for i in range(n):
        for j in range(i + 1, n):
            ci = percentile_interval(replicates[:, i] - replicates[:, j])
            if ci is not None and np.isfinite(ci[0]) and np.isfinite(ci[1]):
                widths.append((ci[1] - ci[0]) / 2)
    return float(np.median(widths)) if widths else None


def tournament_check(
    memo: JudgementMemo,
    systems: Sequence[str],
    ratings: Mapping[str, float],
    replicates: np.ndarray,
    controls: Mapping[str, str],
) -> TournamentDiscrimination:
    """The check on the memo (judging unplayed known pairs) and the Swiss ratings;
    ``replicates`` is (n_boot, N) in ``systems`` order."""
    pairs: list[Pair] = known_pairs(systems, controls)
    before = memo.executed
    scores = memo.play_as("controls")(pairs) if pairs else []
    idx = {s: i for i, s in enumerate(systems)}
    out: list[EloPair] = []
    for (good, bad), m in zip(pairs, scores, strict=True):
        ci = (
            percentile_interval(replicates[:, idx[good]] - replicates[:, idx[bad]])
            if replicates.shape[0]
            else None
        )
        lo, hi = ci if ci is not None else (None, None)
        out.append(
            EloPair(
                **known_pair_fields(good, bad, controls),
                questions=m.n,
                errors=m.n_errors,
                win_rate=m.s_a / m.n if m.n else None,
                elo_gap=float(ratings[good] - ratings[bad]),
                elo_gap_lo=lo,
                elo_gap_hi=hi,
                verdict=verdict(lo, hi) if m.n else verdict(None, None),
            )
        )
    return TournamentDiscrimination(
        status=CHECKED if pairs else NO_CONTROLS,
        controls=dict(controls),
        pairs=out,
        **count_verdicts([p.verdict for p in out]),
        resolvable_elo_gap=resolvable_gap(replicates),
        resolvable_note=RESOLVABLE_NOTE,
        judge_calls_executed=memo.executed - before,
    )
