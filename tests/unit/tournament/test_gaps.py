"""Elo gaps of the real systems: intervals from the bootstrap replicates, resolved when the
interval excludes 0, and the 1/sqrt(n) estimate of the questions that would resolve the rest."""

from __future__ import annotations

import numpy as np
import pytest

from ragcourt.tournament.gaps import elo_gaps, questions_to_resolve

RATINGS = {"a": 1600.0, "b": 1590.0, "c": 1400.0, "oracle": 1700.0}
SYSTEMS = ["a", "b", "c", "oracle"]  # replicate column order


def _replicates() -> np.ndarray:
    """200 replicates: a and b overlap (a's lead is 10 ± 40), c is far below both."""
    rng = np.random.default_rng(0)
    base = np.array([RATINGS[s] for s in SYSTEMS])
    noise = rng.normal(0.0, 20.0, size=(200, 4))
    return base + noise


def test_gaps_of_every_real_pair_in_rank_order_with_intervals() -> None:
    reps = _replicates()
    gaps = elo_gaps(["a", "b", "c"], SYSTEMS, RATINGS, reps, n_questions=40)
    assert gaps.systems == ["a", "b", "c"]
    assert [(p.better, p.worse, p.adjacent) for p in gaps.pairs] == [
        ("a", "b", True),
        ("a", "c", False),
        ("b", "c", True),
    ]
    head = gaps.best_vs_runner_up()
    assert head is not None and head.elo_gap == pytest.approx(10.0)
    diff = reps[:, 0] - reps[:, 1]
    lo, hi = np.percentile(diff, [2.5, 97.5])
    assert head.elo_gap_lo == pytest.approx(lo) and head.elo_gap_hi == pytest.approx(hi)
    assert head.resolved is False
    assert head.questions_to_resolve == questions_to_resolve(40, 10.0, lo, hi)
    assert head.questions_to_resolve is not None and head.questions_to_resolve > 40
    far = gaps.pairs[2]
    assert far.resolved is True and far.questions_to_resolve is None
    assert [p.better for p in gaps.adjacent()] == ["a", "b"]


def test_questions_to_resolve_scales_with_the_squared_ratio() -> None:
    # half-width 20 on a gap of 10 at 50 questions: 50 * (20/10)^2 = 200
    assert questions_to_resolve(50, 10.0, -10.0, 30.0) == 200
    assert questions_to_resolve(50, -10.0, -30.0, 10.0) == 200
    assert questions_to_resolve(50, 0.0, -10.0, 10.0) is None
    # never fewer than the questions already asked
    assert questions_to_resolve(50, 10.0, 5.0, 15.0) == 50


def test_no_replicates_no_intervals_and_one_system_no_pairs() -> None:
    none = elo_gaps(["a", "b"], SYSTEMS, RATINGS, np.zeros((0, 4)), n_questions=5)
    assert [(p.elo_gap_lo, p.resolved, p.questions_to_resolve) for p in none.pairs] == [
        (None, None, None)
    ]
    single = elo_gaps(["a"], SYSTEMS, RATINGS, _replicates(), n_questions=5)
    assert single.pairs == [] and single.best_vs_runner_up() is None
