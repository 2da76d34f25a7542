"""PPI estimates against the formulas worked out independently, and their behaviour on a
simulated biased judge."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from ragcourt.calibration.ppi import (
    estimate,
    human_only,
    judge_only,
    poststratified_weights,
    ppi_difference,
    ppi_mean,
)

Z = stats.norm.ppf(0.975)


def _data(seed: int = 0, n: int = 80, big_n: int = 600) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    y_all = (rng.random(big_n) < 0.6).astype(float)
    # a lenient judge: calls 35% of wrong answers right, 5% of right answers wrong
    yh_all = np.where(y_all == 1, rng.random(big_n) >= 0.05, rng.random(big_n) < 0.35)
    yh_all = yh_all.astype(float)
    idx = rng.choice(big_n, n, replace=False)
    return y_all[idx], yh_all[idx], yh_all


def test_plain_ppi_matches_the_formula() -> None:
    y, yh, yu = _data()
    iv, lam = ppi_mean(y, yh, yu, lam=1.0)
    theta = yu.mean() - (yh - y).mean()
    se = np.sqrt(yu.var() / yu.size + (y - yh).var() / y.size)
    assert lam == 1.0
    assert iv.estimate == pytest.approx(theta)
    assert (iv.lo, iv.hi) == pytest.approx((theta - Z * se, theta + Z * se))


def test_power_tuned_lambda_is_reported_consistently() -> None:
    y, yh, yu = _data(seed=3)
    iv, lam = ppi_mean(y, yh, yu)
    assert lam is not None and 0.0 <= lam <= 1.0
    theta = lam * yu.mean() - (lam * yh - y).mean()
    assert iv.estimate == pytest.approx(theta)
    se = np.sqrt((lam * yu).var() / yu.size + (y - lam * yh).var() / y.size)
    assert iv.width == pytest.approx(2 * Z * se)
    plain, _ = ppi_mean(y, yh, yu, lam=1.0)
    assert iv.width <= plain.width + 1e-12  # tuning never widens the interval


def test_constant_judge_falls_back_to_the_human_mean() -> None:
    y = np.array([1.0, 0.0, 1.0, 1.0, 0.0])
    iv, lam = ppi_mean(y, np.ones(5), np.ones(50))
    assert lam == 1.0 and iv.estimate == pytest.approx(0.6)


def test_human_and_judge_only_intervals() -> None:
    y, _, yu = _data()
    h = human_only(y)
    assert h is not None and h.estimate == pytest.approx(y.mean())
    assert h.width == pytest.approx(2 * Z * y.std() / np.sqrt(y.size))
    j = judge_only(yu)
    assert j is not None and j.n == yu.size and j.estimate == pytest.approx(yu.mean())
    assert human_only([1.0]) is None and judge_only([]) is None


def test_weighted_human_mean_is_the_stratified_mean() -> None:
    # stratum A: 90 items, 3 labelled (all 1); stratum B: 10 items, 5 labelled (all 0)
    strata_lab = ["A"] * 3 + ["B"] * 5
    sw = poststratified_weights(strata_lab, ["A"] * 90 + ["B"] * 10)
    assert sw.weights.tolist() == [30.0] * 3 + [2.0] * 5 and sw.uncovered == {}
    h = human_only([1.0] * 3 + [0.0] * 5, sw.weights)
    assert h is not None and h.estimate == pytest.approx(0.9)


def test_uncovered_strata_are_reported() -> None:
    sw = poststratified_weights(["A", "A"], ["A"] * 6 + ["B"] * 2 + ["C"] * 2)
    assert sw.uncovered == {"B": 2, "C": 2} and sw.uncovered_share == pytest.approx(0.4)
    with pytest.raises(ValueError, match="not in the population"):
        poststratified_weights(["Z"], ["A"])


def test_estimate_needs_min_labels() -> None:
    y, yh, yu = _data(n=8)
    est = estimate(y, yh, yu, min_labels=10)
    assert est.ppi is None and est.human is None and est.judge is not None
    assert "fewer than 10" in est.notes[0]


def test_difference_is_ppi_of_the_per_question_difference() -> None:
    ya, yha, yua = _data(seed=1)
    yb, yhb, yub = _data(seed=2)
    diff = ppi_difference(ya, yb, yha, yhb, yua, yub, alpha=0.1)
    direct = estimate(ya - yb, yha - yhb, yua - yub, alpha=0.1)
    assert diff.ppi == direct.ppi and diff.judge == direct.judge


def test_ppi_removes_the_judge_bias_and_covers() -> None:
    """200 simulated data sets: the lenient judge's mean is off by ~+0.1 and its interval
    almost never covers the truth; PPI is unbiased and covers about 95%."""
    rng = np.random.default_rng(42)
    p, fpr, fnr, n, big_n = 0.6, 0.35, 0.05, 100, 1000
    cover, ppi_err, judge_err, judge_cover = [], [], [], []
    for _ in range(200):
        y = (rng.random(big_n) < p).astype(float)
        yh = np.where(y == 1, rng.random(big_n) >= fnr, rng.random(big_n) < fpr).astype(float)
        idx = rng.choice(big_n, n, replace=False)
        est = estimate(y[idx], yh[idx], yh)
        assert est.ppi is not None and est.judge is not None
        cover.append(est.ppi.covers(p))
        ppi_err.append(est.ppi.estimate - p)
        judge_err.append(est.judge.estimate - p)
        judge_cover.append(est.judge.covers(p))
    bias = fpr * (1 - p) - fnr * p  # 0.11
    assert np.mean(judge_err) == pytest.approx(bias, abs=0.01)
    assert abs(np.mean(ppi_err)) < 0.01
    assert 0.9 <= np.mean(cover) <= 0.99
    assert np.mean(judge_cover) < 0.05


def test_weights_remove_oversampling_bias() -> None:
    """Labels over-sampled where the judge says 0 (equal allocation over its two verdicts):
    the weighted PPI stays unbiased; ignoring the weights would not."""
    rng = np.random.default_rng(7)
    p, big_n = 0.7, 1000
    weighted, unweighted = [], []
    for _ in range(200):
        y = (rng.random(big_n) < p).astype(float)
        yh = np.where(y == 1, rng.random(big_n) >= 0.1, rng.random(big_n) < 0.5).astype(float)
        strata = np.where(yh == 1, "one", "zero")
        idx = np.concatenate(
            [rng.choice(np.flatnonzero(strata == s), 30, replace=False) for s in ("one", "zero")]
        )
        sw = poststratified_weights(strata[idx].tolist(), strata.tolist())
        iv, _ = ppi_mean(y[idx], yh[idx], yh, weights=sw.weights, lam=1.0)
        weighted.append(iv.estimate - p)
        iv0, _ = ppi_mean(y[idx], yh[idx], yh, lam=1.0)
        unweighted.append(iv0.estimate - p)
    assert abs(np.mean(weighted)) < 0.01
    assert abs(np.mean(unweighted)) > 0.03


def test_input_validation() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        ppi_mean([1.0, 0.0], [1.0], [1.0])
    with pytest.raises(ValueError, match="finite"):
        ppi_mean([1.0, float("nan")], [1.0, 0.0], [1.0])
    with pytest.raises(ValueError, match="positive"):
        ppi_mean([1.0, 0.0], [1.0, 0.0], [1.0], weights=[1.0, 0.0])


def test_estimate_uses_plain_ppi_unless_power_tuning_is_asked() -> None:
    y, yh, yu = _data(seed=5)
    plain = estimate(y, yh, yu)
    assert plain.lam == 1.0
    assert plain.ppi is not None
    assert plain.ppi.estimate == pytest.approx(yu.mean() - (yh - y).mean())
    tuned = estimate(y, yh, yu, power_tuning=True)
    assert tuned.lam is not None and 0.0 <= tuned.lam <= 1.0
    assert tuned.ppi is not None and tuned.ppi.width <= plain.ppi.width + 1e-12
