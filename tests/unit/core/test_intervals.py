"""The one percentile-interval implementation: the bounds of the tournament, DAFE and
calibration bootstraps, bit for bit as each computed them before sharing it."""

from __future__ import annotations

import numpy as np
import pytest

from ragcourt.core.intervals import percentile_bounds, percentile_interval


@pytest.mark.parametrize("level", [0.5, 0.8, 0.9, 0.95, 0.99])
def test_level_interval_equals_the_tournament_and_dafe_percentiles(level: float) -> None:
    x = np.random.default_rng(3).normal(size=(401, 3))
    lo, hi = np.percentile(x, [50 * (1 - level), 50 * (1 + level)], axis=0)
    got_lo, got_hi = percentile_bounds(x, 1 - level, axis=0)
    assert np.array_equal(got_lo, lo) and np.array_equal(got_hi, hi)
    assert percentile_interval(x[:, 0], level) == (float(lo[0]), float(hi[0]))


@pytest.mark.parametrize("alpha", [0.01, 0.05, 0.1, 0.32])
def test_alpha_bounds_equal_the_calibration_percentiles(alpha: float) -> None:
    x = np.random.default_rng(4).normal(size=999)
    lo, hi = np.percentile(x, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    assert percentile_bounds(x, alpha) == (lo, hi)


def test_nan_replicates_are_skipped_and_an_all_nan_column_stays_nan() -> None:
    x = np.array([[1.0, np.nan], [2.0, np.nan], [np.nan, np.nan], [3.0, np.nan]])
    lo, hi = percentile_bounds(x, 0.0, axis=0, ignore_nan=True)
    assert (lo[0], hi[0]) == (1.0, 3.0)
    assert np.isnan(lo[1]) and np.isnan(hi[1])
    assert percentile_interval(np.array([])) is None
