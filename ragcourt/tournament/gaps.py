"""Elo gaps between the real systems of a tournament, with bootstrap intervals and an estimate
of how many questions would resolve each gap that is not resolved.

The real systems (controls excluded) are taken in Swiss-rank order; for every pair i < j (i
ranked higher) the gap is Elo_i − Elo_j of the Swiss ratings and its interval the percentile
interval of the same difference over the bootstrap replicates
(:func:`ragcourt.tournament.bootstrap.elo_replicates`: the resamples of the leaderboard's CIs),
every pair at once on the (n_boot, N, N) array of differences. A gap is resolved when its
interval excludes 0. ``questions_to_resolve`` of an unresolved gap is an estimate: assuming the
interval's half-width shrinks as 1/sqrt(n) with the question count n while the gap stays the
same, n_needed = ceil(n · (half_width / |gap|)²); None for a zero gap (no count resolves it).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from ragcourt.core.fixed_model import FixedModel
from ragcourt.core.intervals import percentile_bounds

METHOD_NOTE = (
    "questions to resolve: estimate assuming the 95% bootstrap interval's half-width shrinks "
    "as 1/sqrt(questions) and the gap stays the same: n · (half-width / |gap|)²"
)


class EloGap(FixedModel):
    """One pair of real systems: the higher-ranked first, the Swiss Elo gap and its interval."""

    better: str
    worse: str
    adjacent: bool  # neighbours in the rank order of the real systems
    elo_gap: float
    elo_gap_lo: float | None
    elo_gap_hi: float | None
    resolved: bool | None  # the interval excludes 0; None without replicates
    questions_to_resolve: int | None  # estimate for an unresolved gap (module doc)


class EloGaps(FixedModel):
    """``elo_gaps`` of the tournament summary: every pair of real systems in rank order."""

    systems: list[str]  # real systems, Swiss rank order
    n_questions: int
    level: float
    method_note: str
    pairs: list[EloGap]

    def best_vs_runner_up(self) -> EloGap | None:
        """The gap between the two best real systems (None below two)."""
        return self.pairs[0] if self.pairs else None

    def adjacent(self) -> list[EloGap]:
        """The gaps between neighbours in rank order, best first."""
        return [p for p in self.pairs if p.adjacent]


def questions_to_resolve(n_questions: int, gap: float, lo: float, hi: float) -> int | None:
    """n · ((hi − lo) / 2 / |gap|)² rounded up (at least ``n_questions``); None for a zero gap."""
    if gap == 0 or not (math.isfinite(lo) and math.isfinite(hi)):
        return None
    half = (hi - lo) / 2
    return max(n_questions, math.ceil(n_questions * (half / abs(gap)) ** 2))


def elo_gaps(
    ranked: Sequence[str],
    systems: Sequence[str],
    ratings: Mapping[str, float],
    replicates: np.ndarray,
    n_questions: int,
    level: float = 0.95,
) -> EloGaps:
    """Gaps of every pair of ``ranked`` (real systems, best first); ``replicates`` is
    (n_boot, N) in ``systems`` order (no intervals when it has no rows)."""
    col = np.array([list(systems).index(s) for s in ranked], dtype=np.int64)
    elo = np.array([ratings[s] for s in ranked], dtype=np.float64)
    n = len(ranked)
    i_idx, j_idx = np.triu_indices(n, k=1)
    gap = elo[i_idx] - elo[j_idx]
    if replicates.shape[0] and n > 1:
        reps = replicates[:, col]
        diffs = reps[:, :, None] - reps[:, None, :]  # (n_boot, N, N): Elo_i - Elo_j
        lo_m, hi_m = percentile_bounds(diffs, 1 - level, axis=0)
        lo, hi = lo_m[i_idx, j_idx], hi_m[i_idx, j_idx]
    else:
        lo = hi = np.full(gap.shape, np.nan)
    pairs = []
    for k, (i, j) in enumerate(zip(i_idx.tolist(), j_idx.tolist(), strict=True)):
        has_ci = bool(np.isfinite(lo[k]) and np.isfinite(hi[k]))
        resolved = bool(lo[k] > 0 or hi[k] < 0) if has_ci else None
        pairs.append(
            EloGap(
                better=ranked[i],
                worse=ranked[j],
                adjacent=j == i + 1,
                elo_gap=float(gap[k]),
                elo_gap_lo=float(lo[k]) if has_ci else None,
                elo_gap_hi=float(hi[k]) if has_ci else None,
                resolved=resolved,
                questions_to_resolve=questions_to_resolve(
                    n_questions, float(gap[k]), float(lo[k]), float(hi[k])
                )
                if resolved is False
                else None,
            )
        )
    return EloGaps(
        systems=list(ranked),
        n_questions=n_questions,
        level=level,
        method_note=METHOD_NOTE,
        pairs=pairs,
    )
