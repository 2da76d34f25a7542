"""Prediction-powered inference (PPI) of a mean, and the estimates it is compared with.

Everything statistical is ``ppi_py`` (Angelopoulos et al. 2023, "Prediction-powered
inference", Science; PPI++ power tuning, Angelopoulos, Duchi & Zrnic 2023); this module only
arranges the data, weights and edge cases.

With n labelled items (human label Y_i, judge value f(X_i)) and N judged items (judge value
f(X̃_j), all items the judge scored, the labelled ones included, as ARES does), the PPI++ mean is

    θ̂_λ = mean_j(λ·f(X̃_j)) − mean_i(λ·f(X_i) − Y_i)
         = λ·mean(f(X̃)) − mean(λ·f(X) − Y)

With λ = 1 this is the plain PPI estimator θ̂ = mean(f(X̃)) − mean(f(X) − Y) (Angelopoulos et
al. 2023; what ARES uses), the default here. ``power_tuning=True`` lets ``ppi_py`` choose λ ∈
[0, 1] from the data (PPI++; λ = 0 is the human-only mean), which never widens the interval but
estimates λ from the same few labels: in ``benchmarks/ppi.py`` (simple random samples)
its 95% intervals cover 0.84 with 20 labels and 0.92 with 50, against 0.91 and 0.94 for λ = 1.
The (1 − alpha) interval is the CLT one (``ppi_py.ppi_mean_ci``),

    θ̂_λ ± z_{1−α/2}·sqrt(Var(λ·f(X̃))/N + Var(Y − λ·f(X))/n)

The rectifier mean(f(X) − Y) is the judge's bias measured on the labelled items: subtracting it
is what removes the bias, and its variance is what makes the interval honest about the judge's
errors. With weights w (stratified sampling, :func:`poststratified_weights`), ``ppi_py``
normalises them to mean 1, uses mean(w·(Y − λ·f(X))) as the rectifier and Var(w·(Y − λ·f(X)))/n
as its variance; that variance includes the spread of the weights themselves. With the default
proportional allocation the weights are near 1 and coverage matches a simple random sample;
with ``equal`` allocation the large stratum where a lenient judge makes its errors gets few
labels, and the interval under-covers with few labels (0.80 with 20 labels in the benchmark).

Beside it, for the same items: the **human-only** mean of Y (``ppi_py.classical_mean_ci``,
weighted when w is given) and the **judge-only** mean of f(X̃) over the N judged items (its
CLT interval counts only question sampling, not the judge's bias: it is what the label-free
pipeline reports).

Using all N judged items, the labelled ones included, makes the interval slightly
conservative when n is a large share of N (for a noisy judge the two means are negatively
correlated, which the formula's independence assumption ignores): coverage ~0.96-0.97 at
n = 200, N = 1000 in the benchmark. With λ = 1 a judge whose errors are noisier than its
scores are informative gives a wider interval than human-only (the calibrate stage warns).

CLT intervals are unreliable with few labels (and have zero width when every label and judge
value agree); callers require a minimum number of labels (``min_labels``).

Pairwise (:func:`ppi_difference`): the per-question outcome
difference D = Y_a − Y_b with judge difference f_a − f_b over the questions where the judge
scored both systems (N) and the people labelled both (n): the same PPI mean of D, so the
interval of system a minus system b accounts for the judge's errors on both and for their
correlation within a question.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any, TypedDict, Unpack

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]


@cache
def _ppi_py() -> Any:
    """The ``ppi_py`` module, imported on first use (it loads numba, ~3 s)."""
    return importlib.import_module("ppi_py")


@dataclass(frozen=True)
class Interval:
    """A point estimate with its two-sided (1 − alpha) interval over ``n`` values."""

    estimate: float
    lo: float
    hi: float
    n: int

    @property
    def width(self) -> float:
        return self.hi - self.lo

    def covers(self, value: float) -> bool:
        return self.lo <= value <= self.hi


@dataclass(frozen=True)
class Estimates:
    """Human-only, judge-only and PPI estimates of one mean (``None`` where undefined)."""

    n_labeled: int
    n_unlabeled: int
    judge: Interval | None
    human: Interval | None
    ppi: Interval | None
    lam: float | None  # the power-tuning λ ppi_py chose (None if not identifiable)
    notes: list[str] = field(default_factory=list)


def _arr(x: Sequence[float] | FloatArray) -> FloatArray:
    a = np.asarray(x, dtype=np.float64)
    if a.ndim != 1:
        raise ValueError("expected a 1-d sequence of numbers")
    if not np.all(np.isfinite(a)):
        raise ValueError("values must be finite (drop missing labels/judge values first)")
    return a


def _interval(point: float, ci: tuple[Any, Any], n: int) -> Interval:
    lo, hi = (float(np.asarray(v).reshape(-1)[0]) for v in ci)
    return Interval(float(point), lo, hi, n)


def judge_only(yhat_all: Sequence[float] | FloatArray, alpha: float = 0.05) -> Interval | None:
    """Mean judge value over all judged items with its CLT interval (None if none)."""
    a = _arr(yhat_all)
    if a.size == 0:
        return None
    ci = _ppi_py().classical_mean_ci(a, alpha=alpha)
    return _interval(float(a.mean()), ci, int(a.size))


def human_only(
    y: Sequence[float] | FloatArray,
    weights: Sequence[float] | FloatArray | None = None,
    alpha: float = 0.05,
) -> Interval | None:
    """(Weighted) mean of the human labels with its CLT interval (None if fewer than 2)."""
    a = _arr(y)
    if a.size < 2:
        return None
    w = None if weights is None else _arr(weights)
    ci = _ppi_py().classical_mean_ci(a, w=w, alpha=alpha)
    point = float(a.mean()) if w is None else float(np.average(a, weights=w))
    return _interval(point, ci, int(a.size))


def ppi_mean(
    y: Sequence[float] | FloatArray,
    yhat: Sequence[float] | FloatArray,
    yhat_all: Sequence[float] | FloatArray,
    alpha: float = 0.05,
    weights: Sequence[float] | FloatArray | None = None,
    lam: float | None = None,
) -> tuple[Interval, float | None]:
    """The PPI++ estimate of E[Y] and its (1 − alpha) CLT interval (module doc), and the λ.

    ``y``/``yhat``: human labels and judge values of the n labelled items; ``yhat_all``: judge
    values of all N judged items. ``lam=None`` lets ``ppi_py`` power-tune λ; when every judge
    value is the same λ is not identifiable and 1 is used (the estimate is then the human
    mean). The returned λ is recovered from the point estimate (θ̂_λ is linear in λ); None if
    the judge means on labelled and all items coincide.
    """
    Y, Yh, Yu = _arr(y), _arr(yhat), _arr(yhat_all)
    if Y.size != Yh.size:
        raise ValueError("ppi_mean: y and yhat differ in length")
    if Y.size < 2 or Yu.size < 1:
        raise ValueError("ppi_mean: needs at least 2 labelled and 1 judged item")
    w = None if weights is None else _arr(weights)
    if w is not None and (w.size != Y.size or np.any(w <= 0)):
        raise ValueError("ppi_mean: weights must be positive, one per labelled item")
    if lam is None and np.ptp(np.concatenate([Yh, Yu])) == 0:
        lam = 1.0
    ppi = _ppi_py()
    point = float(np.asarray(ppi.ppi_mean_pointestimate(Y, Yh, Yu, lam=lam, w=w)).reshape(-1)[0])
    ci = ppi.ppi_mean_ci(Y, Yh, Yu, alpha=alpha, lam=lam, w=w)
    used = lam
    if used is None:
        wn = np.ones_like(Y) if w is None else w / w.mean()
        gap = float(Yu.mean() - np.mean(wn * Yh))
        human = float(np.mean(wn * Y))
        used = (point - human) / gap if abs(gap) > 1e-12 else None
        if used is not None:
            used = float(min(1.0, max(0.0, used)))
    return _interval(point, ci, int(Y.size)), used


def estimate(
    y: Sequence[float] | FloatArray,
    yhat: Sequence[float] | FloatArray,
    yhat_all: Sequence[float] | FloatArray,
    alpha: float = 0.05,
    weights: Sequence[float] | FloatArray | None = None,
    min_labels: int = 2,
    power_tuning: bool = False,
) -> Estimates:
    """Judge-only, human-only and PPI estimates of one mean (PPI with λ = 1, or power-tuned
    with ``power_tuning``); PPI and human-only are None (with a note) when fewer than
    ``min_labels`` items are labelled."""
    Y, Yu = _arr(y), _arr(yhat_all)
    notes: list[str] = []
    judge = judge_only(Yu, alpha)
    if Y.size < max(2, min_labels):
        notes.append(f"{Y.size} labelled item(s), fewer than {max(2, min_labels)}: no PPI")
        return Estimates(int(Y.size), int(Yu.size), judge, None, None, None, notes)
    if Yu.size == 0:
        notes.append("no judged items: no PPI")
        return Estimates(int(Y.size), 0, None, human_only(Y, weights, alpha), None, None, notes)
    lam = None if power_tuning else 1.0
    interval, used = ppi_mean(Y, yhat, Yu, alpha=alpha, weights=weights, lam=lam)
    return Estimates(
        int(Y.size), int(Yu.size), judge, human_only(Y, weights, alpha), interval, used, notes
    )


class EstimateSettings(TypedDict, total=False):
    """The keyword arguments of :func:`estimate`."""

    alpha: float
    weights: Sequence[float] | FloatArray | None
    min_labels: int
    power_tuning: bool


def ppi_difference(
    y_a: Sequence[float] | FloatArray,
    y_b: Sequence[float] | FloatArray,
    yhat_a: Sequence[float] | FloatArray,
    yhat_b: Sequence[float] | FloatArray,
    yhat_all_a: Sequence[float] | FloatArray,
    yhat_all_b: Sequence[float] | FloatArray,
    **settings: Unpack[EstimateSettings],
) -> Estimates:
    """Estimates of E[Y_a − Y_b] from per-question pairs (labelled questions: both systems
    labelled and judged; all questions where the judge scored both): :func:`estimate` of the
    differences Y_a − Y_b and f_a − f_b (module doc)."""
    d = _arr(y_a) - _arr(y_b)
    dhat = _arr(yhat_a) - _arr(yhat_b)
    return estimate(d, dhat, _arr(yhat_all_a) - _arr(yhat_all_b), **settings)


@dataclass(frozen=True)
class StratumWeights:
    """Post-stratification weights of labelled items and the strata left without labels."""

    weights: FloatArray  # one per labelled item, N_h / m_h
    uncovered: dict[str, int]  # stratum -> population count, for strata with no label
    uncovered_share: float  # their share of the population


def poststratified_weights(
    labeled_strata: Sequence[str], population_strata: Sequence[str]
) -> StratumWeights:
    """w_i = N_h / m_h for a labelled item of stratum h (N_h population items, m_h labelled).

    Labels drawn at random within strata but over-sampled in some (``sampling``) estimate a
    population mean without bias with these weights. A stratum with population but no labels
    cannot be corrected: it is reported in ``uncovered`` (the weights then average the
    labelled strata only). A labelled stratum absent from the population is a ValueError.
    """
    pop: dict[str, int] = {}
    for s in population_strata:
        pop[s] = pop.get(s, 0) + 1
    lab: dict[str, int] = {}
    for s in labeled_strata:
        lab[s] = lab.get(s, 0) + 1
    extra = set(lab) - set(pop)
    if extra:
        raise ValueError(f"labelled strata not in the population: {sorted(extra)}")
    w = np.array([pop[s] / lab[s] for s in labeled_strata], dtype=np.float64)
    uncovered = {s: n for s, n in sorted(pop.items()) if s not in lab}
    total = sum(pop.values())
    share = sum(uncovered.values()) / total if total else 0.0
    return StratumWeights(w, uncovered, share)
