"""Judge-human agreement on the labelled items, with bootstrap confidence intervals.

Per judge: ``n`` labelled items it scored, **accuracy** (share of items where the judge's
label equals the person's), **Cohen's kappa** κ = (p_o − p_e) / (1 − p_e) (p_o observed
agreement, p_e agreement expected from the two label distributions; unweighted, over the
classes {0, 1} for answers and {0, 1, 2} for passage grades) and, where the judge has a graded
score, **Spearman's ρ** between the score and the human label (for binary human labels a rank
point-biserial correlation).

Point estimates come from :mod:`ragcourt.judging.agreement` (scikit-learn / scipy). Intervals
are percentile bootstrap intervals over items (``scipy.stats.bootstrap``, paired resampling,
seeded); resampled statistics are computed vectorised (the formulas above, checked against
scikit-learn/scipy in the tests). A statistic undefined on some resamples (one class only,
constant scores) gets its interval from the resamples where it is defined; undefined
statistics are ``None``, never 0. Agreement is measured on the labelled sample as drawn
(stratified sampling over-represents contested items, so these numbers are conservative
relative to the whole data set).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import polars as pl
from scipy import stats
from sklearn.metrics import accuracy_score, cohen_kappa_score

from ragcourt.core.intervals import percentile_bounds
from ragcourt.core.schemas import PolarsDtype, frame_schema
from ragcourt.judging.agreement import binary_agreement, rank_correlation

FloatArray = npt.NDArray[np.float64]

AGREEMENT_SCHEMA: dict[str, PolarsDtype] = frame_schema("calibration_agreement")


def _accuracy_v(a: FloatArray, b: FloatArray, axis: int = -1) -> FloatArray:
    return np.asarray(np.mean(a == b, axis=axis), dtype=np.float64)


def kappa_vectorized(
    a: FloatArray, b: FloatArray, classes: Sequence[int], axis: int = -1
) -> FloatArray:
    """Cohen's kappa along ``axis`` (NaN where p_e = 1), for bootstrap resamples."""
    a = np.moveaxis(np.asarray(a, dtype=np.float64), axis, -1)
    b = np.moveaxis(np.asarray(b, dtype=np.float64), axis, -1)
    po = np.mean(a == b, axis=-1)
    pe = sum(np.mean(a == c, axis=-1) * np.mean(b == c, axis=-1) for c in classes)
    with np.errstate(divide="ignore", invalid="ignore"):
        k = (po - pe) / (1.0 - pe)
    return np.asarray(np.where(np.isclose(pe, 1.0), np.nan, k), dtype=np.float64)


def spearman_vectorized(a: FloatArray, b: FloatArray, axis: int = -1) -> FloatArray:
    """Spearman's rho along ``axis`` (average ranks; NaN where either side is constant)."""
    ra = stats.rankdata(np.asarray(a, dtype=np.float64), axis=axis)
    rb = stats.rankdata(np.asarray(b, dtype=np.float64), axis=axis)
    ra = ra - ra.mean(axis=axis, keepdims=True)
    rb = rb - rb.mean(axis=axis, keepdims=True)
    num = (ra * rb).sum(axis=axis)
    den = np.sqrt((ra * ra).sum(axis=axis) * (rb * rb).sum(axis=axis))
    with np.errstate(divide="ignore", invalid="ignore"):
        r = num / den
    return np.asarray(np.where(den > 0, r, np.nan), dtype=np.float64)


def bootstrap_ci(
    statistic: Callable[[FloatArray, FloatArray, int], FloatArray],
    a: Sequence[float] | FloatArray,
    b: Sequence[float] | FloatArray,
    n_resamples: int = 1000,
    seed: int = 0,
    alpha: float = 0.05,
) -> tuple[float | None, float | None]:
    """Percentile bootstrap interval of a paired statistic (``statistic(a, b, axis)``),
    ignoring resamples where it is undefined; (None, None) if it never is or n < 2."""
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    if x.size < 2:
        return None, None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # degenerate / partly undefined: handled below
        res = stats.bootstrap(
            (x, y),
            lambda u, v, axis=-1: statistic(u, v, axis),
            paired=True,
            vectorized=True,
            n_resamples=n_resamples,
            method="percentile",
            confidence_level=1 - alpha,
            rng=np.random.default_rng(seed),
        )
    dist = np.asarray(res.bootstrap_distribution, dtype=np.float64)
    dist = dist[np.isfinite(dist)]
    if dist.size == 0:
        return None, None
    lo, hi = percentile_bounds(dist, alpha)
    return float(lo), float(hi)


def _finite(x: Any) -> float | None:
    return float(x) if x is not None and math.isfinite(float(x)) else None


def binary_judge_agreement(
    judge: str,
    role: str,
    human: Sequence[bool],
    verdict: Sequence[bool],
    score: Sequence[float | None] | None = None,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    alpha: float = 0.05,
    kappa_warning: float = 0.4,
) -> dict[str, Any]:
    """An :data:`AGREEMENT_SCHEMA` row for a binary judge against binary human labels;
    ``score`` (same items, None where missing) adds Spearman between score and label."""
    h = np.asarray(human, dtype=np.float64)
    v = np.asarray(verdict, dtype=np.float64)
    base = binary_agreement(h.astype(int).tolist(), v.astype(int).tolist())
    acc_lo, acc_hi = bootstrap_ci(_accuracy_v, h, v, n_resamples, seed, alpha)
    k_lo, k_hi = bootstrap_ci(
        lambda a, b, ax: kappa_vectorized(a, b, (0, 1), ax), h, v, n_resamples, seed, alpha
    )
    row: dict[str, Any] = {
        "judge": judge,
        "role": role,
        "target": "answer_correct",
        "n": len(h),
        "accuracy": base["accuracy"],
        "accuracy_lo": acc_lo,
        "accuracy_hi": acc_hi,
        "kappa": base["kappa"],
        "kappa_lo": k_lo,
        "kappa_hi": k_hi,
        "spearman": None,
        "spearman_lo": None,
        "spearman_hi": None,
    }
    if score is not None:
        s = np.array([math.nan if x is None else float(x) for x in score], dtype=np.float64)
        keep = np.isfinite(s)
        rc = rank_correlation(s[keep].tolist(), h[keep].tolist())
        row["spearman"] = rc["spearman"]
        if rc["spearman"] is not None:
            row["spearman_lo"], row["spearman_hi"] = bootstrap_ci(
                spearman_vectorized, s[keep], h[keep], n_resamples, seed, alpha
            )
    row["low_agreement"] = row["kappa"] is not None and row["kappa"] < kappa_warning
    return row


def graded_agreement(
    judge: str,
    role: str,
    human: Sequence[int],
    grade: Sequence[int],
    *,
    classes: Sequence[int] = (0, 1, 2),
    n_resamples: int = 1000,
    seed: int = 0,
    alpha: float = 0.05,
    kappa_warning: float = 0.4,
) -> dict[str, Any]:
    """An :data:`AGREEMENT_SCHEMA` row for graded labels (passage relevance 0/1/2): exact
    accuracy, unweighted kappa over ``classes`` and Spearman, each with bootstrap CIs."""
    h = np.asarray(human, dtype=np.float64)
    g = np.asarray(grade, dtype=np.float64)
    if h.shape != g.shape:
        raise ValueError("graded_agreement: label sequences differ in length")
    n = int(h.size)
    acc = kappa = None
    if n:
        acc = float(accuracy_score(h.astype(int), g.astype(int)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # one class only: nan -> None
            kappa = _finite(cohen_kappa_score(h.astype(int), g.astype(int), labels=list(classes)))
    rc = rank_correlation(g.tolist(), h.tolist())
    acc_lo, acc_hi = bootstrap_ci(_accuracy_v, h, g, n_resamples, seed, alpha)
    k_lo, k_hi = bootstrap_ci(
        lambda a, b, ax: kappa_vectorized(a, b, tuple(classes), ax),
        h,
        g,
        n_resamples,
        seed,
        alpha,
    )
    s_lo, s_hi = (
        bootstrap_ci(spearman_vectorized, g, h, n_resamples, seed, alpha)
        if rc["spearman"] is not None
        else (None, None)
    )
    return {
        "judge": judge,
        "role": role,
        "target": "passage_grade",
        "n": n,
        "accuracy": acc,
        "accuracy_lo": acc_lo,
        "accuracy_hi": acc_hi,
        "kappa": kappa,
        "kappa_lo": k_lo,
        "kappa_hi": k_hi,
        "spearman": rc["spearman"],
        "spearman_lo": s_lo,
        "spearman_hi": s_hi,
        "low_agreement": kappa is not None and kappa < kappa_warning,
    }


def agreement_frame(rows: Sequence[dict[str, Any]]) -> pl.DataFrame:
    """Rows as an :data:`AGREEMENT_SCHEMA` frame."""
    return pl.DataFrame(list(rows), schema=AGREEMENT_SCHEMA)
