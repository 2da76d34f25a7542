"""Judge-human agreement rows and their bootstrap intervals."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from ragcourt.calibration.agreement import (
    agreement_frame,
    binary_judge_agreement,
    bootstrap_ci,
    graded_agreement,
    kappa_vectorized,
    spearman_vectorized,
)


@pytest.mark.parametrize("seed", range(5))
def test_vectorised_statistics_match_sklearn_and_scipy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, (4, 40)).astype(float)
    b = np.where(rng.random((4, 40)) < 0.6, a, rng.integers(0, 3, (4, 40))).astype(float)
    k = kappa_vectorized(a, b, (0, 1, 2))
    r = spearman_vectorized(a, b)
    for i in range(4):
        assert k[i] == pytest.approx(cohen_kappa_score(a[i], b[i], labels=[0, 1, 2]))
        assert r[i] == pytest.approx(stats.spearmanr(a[i], b[i]).statistic)


def test_undefined_statistics_are_nan_not_zero() -> None:
    ones = np.ones((1, 5))
    assert np.isnan(kappa_vectorized(ones, ones, (0, 1)))[0]
    assert np.isnan(spearman_vectorized(ones, np.arange(5.0)[None, :]))[0]


def test_binary_row_known_case() -> None:
    # TP=3, FN=1, FP=1, TN=3: accuracy 0.75, kappa 0.5
    human = [True, True, True, True, False, False, False, False] * 5
    judge = [True, True, True, False, True, False, False, False] * 5
    row = binary_judge_agreement("j", "final", human, judge, n_resamples=500)
    assert row["n"] == 40 and row["accuracy"] == 0.75 and row["kappa"] == pytest.approx(0.5)
    assert row["accuracy_lo"] < 0.75 < row["accuracy_hi"]
    assert row["kappa_lo"] < 0.5 < row["kappa_hi"]
    assert row["low_agreement"] is False and row["spearman"] is None
    low = binary_judge_agreement("j", "final", human, judge, kappa_warning=0.6)
    assert low["low_agreement"] is True


def test_scores_give_spearman_and_missing_scores_are_dropped() -> None:
    human = [True, False] * 10
    score: list[float | None] = [0.9, 0.1] * 10
    score[0] = None
    row = binary_judge_agreement("j", "primary1", human, [True, False] * 10, score)
    assert row["spearman"] == pytest.approx(1.0)
    assert row["spearman_lo"] == pytest.approx(1.0)


def test_bootstrap_interval_is_seeded_and_shrinks_with_n() -> None:
    rng = np.random.default_rng(0)
    a = rng.integers(0, 2, 400).astype(float)
    b = np.where(rng.random(400) < 0.8, a, 1 - a)

    def acc(u: np.ndarray, v: np.ndarray, axis: int) -> np.ndarray:
        return np.asarray(np.mean(u == v, axis=axis), dtype=float)

    small = bootstrap_ci(acc, a[:40], b[:40], seed=1)
    assert small == bootstrap_ci(acc, a[:40], b[:40], seed=1)
    big = bootstrap_ci(acc, a, b, seed=1)
    assert small[0] is not None and small[1] is not None
    assert big[0] is not None and big[1] is not None
    assert big[1] - big[0] < small[1] - small[0]
    assert bootstrap_ci(acc, a[:1], b[:1]) == (None, None)


def test_graded_row() -> None:
    rng = np.random.default_rng(3)
    human = rng.integers(0, 3, 60)
    grade = np.where(rng.random(60) < 0.75, human, rng.integers(0, 3, 60))
    row = graded_agreement("relevance", "relevance", human.tolist(), grade.tolist())
    assert row["target"] == "passage_grade" and row["n"] == 60
    assert row["kappa"] == pytest.approx(cohen_kappa_score(human, grade, labels=[0, 1, 2]))
    assert row["spearman"] == pytest.approx(stats.spearmanr(grade, human).statistic)
    assert row["kappa_lo"] <= row["kappa"] <= row["kappa_hi"]
    df = agreement_frame([row])
    assert df.height == 1 and df["low_agreement"].to_list() == [False]
