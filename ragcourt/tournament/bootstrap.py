"""Bootstrap confidence intervals over questions for Swiss Elo and Bradley-Terry.

Each replicate draws the question set with replacement (counts ~ Multinomial(Q, 1/Q), seeded),
recomputes every match total from the same judgements, replays the Swiss schedule that was
actually played (pairings are not redrawn: that would need judgements never made) and refits
BT. The interval is the percentile interval [(1−level)/2, (1+level)/2] of the replicates.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ragcourt.core.intervals import percentile_bounds
from ragcourt.tournament.score_matrix import ScoreMatrix
from ragcourt.tournament.swiss import Pair

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Intervals:
    systems: list[str]
    elo_lo: FloatArray
    elo_hi: FloatArray
    bt_lo: FloatArray
    bt_hi: FloatArray
    n_boot: int


def question_counts(n_questions: int, n_boot: int, seed: int) -> npt.NDArray[np.int64]:
    """(n_boot, Q) resample counts of each question."""
    rng = np.random.default_rng(seed)
    return rng.multinomial(n_questions, np.full(n_questions, 1.0 / n_questions), size=n_boot)


def elo_replicates(
    sm: ScoreMatrix,
    schedule: list[list[Pair]],
    n_boot: int = 200,
    seed: int = 0,
    k: float = 32.0,
    upset_weighting: bool = True,
    initial: float = 1500.0,
) -> FloatArray:
    """(n_boot, N) Swiss Elo of every replicate (``schedule`` replayed on each resample); (0, N)
    when ``n_boot`` is 0 or nothing was judged."""
    if n_boot <= 0 or not sm.questions:
        return np.zeros((0, len(sm.systems)))
    counts = question_counts(len(sm.questions), n_boot, seed)
    return sm.replay_elo(schedule, counts, k, upset_weighting, initial)


def intervals(
    sm: ScoreMatrix,
    elos: FloatArray,
    seed: int = 0,
    anchor: float = 1500.0,
    bt_pairs: list[Pair] | None = None,
    level: float = 0.95,
) -> Intervals:
    """Percentile CIs for the Swiss Elo from its replicates ``elos`` (:func:`elo_replicates`
    with the same ``seed``) and for BT refitted (on ``bt_pairs``) on the same resamples."""
    n_boot = len(elos)
    if n_boot == 0:
        nan = np.full(len(sm.systems), np.nan)
        return Intervals(sm.systems, nan, nan, nan, nan, 0)
    counts = question_counts(len(sm.questions), n_boot, seed)
    bts = np.vstack([sm.fit_bt(c, bt_pairs, anchor) for c in counts])
    e_lo, e_hi = percentile_bounds(elos, 1 - level, axis=0)
    # all-NaN columns (never-judged systems) stay NaN
    b_lo, b_hi = percentile_bounds(bts, 1 - level, axis=0, ignore_nan=True)
    return Intervals(sm.systems, e_lo, e_hi, b_lo, b_hi, n_boot)
