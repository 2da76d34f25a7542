"""Agreement statistics (spec §7), computed with scikit-learn and scipy.

Binary: accuracy, macro-F1 and Cohen's kappa (sklearn). Scores: Spearman rho and Kendall
tau-b (scipy) with standard errors SE(rho) = sqrt((1 + rho²/2) / (n - 3)) (Bonett & Wright
2000, as RAGalyst reports) and SE(tau) = sqrt(0.437 / (n - 4)) (Fieller et al. 1957, the
companion approximation in the same paper; strictly both are SEs on Fisher's z scale, used
as the SE of the coefficient the way RAGalyst does). Undefined values (constant input, too few
items) are ``None``, never 0.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np
from scipy import stats
from sklearn.metrics import accuracy_score, cohen_kappa_score, f1_score


def _finite(x: float) -> float | None:
    return float(x) if x is not None and math.isfinite(x) else None


def spearman_se(rho: float, n: int) -> float | None:
    """Bonett-Wright standard error of a Spearman correlation (None if n <= 3)."""
    return math.sqrt((1 + rho * rho / 2) / (n - 3)) if n > 3 else None


def kendall_se(n: int) -> float | None:
    """Fieller standard error of Kendall's tau (None if n <= 4)."""
    return math.sqrt(0.437 / (n - 4)) if n > 4 else None


def binary_agreement(
    y_true: Sequence[bool | int], y_pred: Sequence[bool | int]
) -> dict[str, float | int | None]:
    """Accuracy, macro-F1 (over both classes) and Cohen's kappa of two binary labelings."""
    t = np.asarray(y_true, dtype=int)
    p = np.asarray(y_pred, dtype=int)
    if t.shape != p.shape:
        raise ValueError("binary_agreement: label sequences differ in length")
    n = int(t.size)
    if n == 0:
        return {"n": 0, "accuracy": None, "macro_f1": None, "kappa": None}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # kappa on one class: nan -> None below
        kappa = cohen_kappa_score(t, p, labels=[0, 1])
    return {
        "n": n,
        "accuracy": float(accuracy_score(t, p)),
        "macro_f1": float(f1_score(t, p, labels=[0, 1], average="macro", zero_division=0.0)),
        "kappa": _finite(float(kappa)),
    }


def rank_correlation(x: Sequence[float], y: Sequence[float]) -> dict[str, float | int | None]:
    """Spearman rho and Kendall tau-b of paired scores with SEs and p-values; pairs with a
    missing (None/NaN) side are dropped and ``n`` counts the pairs used."""
    a = np.asarray(x, dtype=float)
    b = np.asarray(y, dtype=float)
    if a.shape != b.shape:
        raise ValueError("rank_correlation: score sequences differ in length")
    keep = np.isfinite(a) & np.isfinite(b)
    a, b = a[keep], b[keep]
    n = int(a.size)
    out: dict[str, float | int | None] = {
        "n": n,
        "spearman": None,
        "spearman_se": None,
        "spearman_p": None,
        "kendall_tau_b": None,
        "kendall_se": None,
        "kendall_p": None,
    }
    if n < 3 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return out
    sp = stats.spearmanr(a, b)
    kt = stats.kendalltau(a, b, variant="b")
    rho = _finite(float(sp.statistic))
    out.update(
        spearman=rho,
        spearman_se=spearman_se(rho, n) if rho is not None else None,
        spearman_p=_finite(float(sp.pvalue)),
        kendall_tau_b=_finite(float(kt.statistic)),
        kendall_se=kendall_se(n),
        kendall_p=_finite(float(kt.pvalue)),
    )
    return out
