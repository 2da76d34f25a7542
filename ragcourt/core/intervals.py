"""Percentile bootstrap intervals: the one implementation every layer uses.

For replicates ``x`` of a statistic and a two-sided error ``alpha`` the interval is
``[P(100·alpha/2), P(100·(1 − alpha/2))]`` of ``x`` (numpy's linear interpolation); a
``level`` of 0.95 is ``alpha`` 0.05. ``ignore_nan`` skips NaN replicates (an all-NaN column
stays NaN).
"""

from __future__ import annotations

import warnings

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]


def percentile_bounds(
    values: npt.ArrayLike, alpha: float = 0.05, axis: int | None = None, ignore_nan: bool = False
) -> tuple[FloatArray, FloatArray]:
    """The lower and upper percentile bounds of ``values`` (along ``axis``; all of them when
    None, as 0-d arrays)."""
    arr = np.asarray(values, dtype=np.float64)
    q = [100 * alpha / 2, 100 * (1 - alpha / 2)]
    if not ignore_nan:
        lo, hi = np.percentile(arr, q, axis=axis)
    else:
        with warnings.catch_warnings():  # all-NaN columns stay NaN
            warnings.simplefilter("ignore", RuntimeWarning)
            lo, hi = np.nanpercentile(arr, q, axis=axis)
    return np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)


def percentile_interval(values: npt.ArrayLike, level: float = 0.95) -> tuple[float, float] | None:
    """The ``level`` percentile interval of the replicates ``values`` (None when empty)."""
    arr = np.asarray(values, dtype=np.float64)
    if arr.size == 0:
        return None
    lo, hi = percentile_bounds(arr, 1 - level)
    return float(lo), float(hi)
