"""Bradley-Terry strengths on the Elo scale from fractional pairwise wins.

Model: P(i beats j) = 1 / (1 + 10^((β_j − β_i)/400)), the same scale as Elo. Fitted as a
logistic regression without intercept (FastChat's ``compute_mle_elo`` layout): one feature
column per system, +ln 10 for the first system of a row and −ln 10 for the second; each
judged pair contributes a "first wins" row weighted by its summed score s_a and a
"second wins" row weighted by s_b, so soft scores count as fractional wins.
sklearn's L2 penalty with C = ``l2_c`` is a Gaussian prior β/400 ~ N(0, C): it keeps the fit
finite when a system wins every comparison and centres the strengths (Σβ = 0), reported as
``anchor + β``. Systems that were never judged get NaN.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import numpy.typing as npt
from sklearn.linear_model import LogisticRegression

LN10 = math.log(10.0)
SCALE = 400.0


def fit(
    idx_a: npt.ArrayLike,
    idx_b: npt.ArrayLike,
    w_a: npt.ArrayLike,
    w_b: npt.ArrayLike,
    n_systems: int,
    anchor: float = 1500.0,
    l2_c: float = 1.0,
) -> npt.NDArray[np.float64]:
    """Elo-scale BT strengths for systems 0..n_systems-1 from per-row win weights."""
    ia, ib = np.asarray(idx_a, dtype=np.int64), np.asarray(idx_b, dtype=np.int64)
    wa, wb = np.asarray(w_a, dtype=float), np.asarray(w_b, dtype=float)
    out = np.full(n_systems, np.nan)
    seen = np.zeros(n_systems, dtype=bool)
    seen[ia[(wa + wb) > 0]] = True
    seen[ib[(wa + wb) > 0]] = True
    if not seen.any():
        return out
    rows = np.arange(len(ia))
    x = np.zeros((len(ia), n_systems))
    x[rows, ia] = LN10
    x[rows, ib] = -LN10
    features = np.vstack([x, x])
    labels = np.concatenate([np.ones(len(ia)), np.zeros(len(ia))])
    weights = np.concatenate([wa, wb])
    model = LogisticRegression(fit_intercept=False, C=l2_c, tol=1e-8, max_iter=1000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=UserWarning)
        model.fit(features, labels, sample_weight=weights)
    beta = SCALE * model.coef_[0]
    out[seen] = anchor + beta[seen]
    return out
