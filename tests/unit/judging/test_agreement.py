"""Agreement statistics against values worked out by hand (sklearn/scipy underneath)."""

from __future__ import annotations

import math

import pytest

from ragcourt.judging.agreement import binary_agreement, rank_correlation, spearman_se


def test_binary_agreement_known_case() -> None:
    # confusion (true x pred): TP=3, FN=1, FP=1, TN=3 (n=8)
    y_true = [1, 1, 1, 1, 0, 0, 0, 0]
    y_pred = [1, 1, 1, 0, 1, 0, 0, 0]
    out = binary_agreement(y_true, y_pred)
    # accuracy 6/8; p_o = 0.75, p_e = 0.5*0.5 + 0.5*0.5 = 0.5 -> kappa = 0.25/0.5 = 0.5
    # F1(1) = 2*3/(2*3+1+1) = 0.75, F1(0) = 0.75 -> macro 0.75
    assert out == {"n": 8, "accuracy": 0.75, "macro_f1": 0.75, "kappa": pytest.approx(0.5)}


def test_binary_agreement_kappa_undefined_on_one_class() -> None:
    out = binary_agreement([1, 1, 1], [1, 1, 1])
    assert out["accuracy"] == 1.0 and out["kappa"] is None


def test_rank_correlation_perfect_and_se() -> None:
    out = rank_correlation([1, 2, 3, 4, 5, 6], [10, 20, 30, 40, 50, 60])
    assert out["spearman"] == pytest.approx(1.0)
    assert out["kendall_tau_b"] == pytest.approx(1.0)
    assert out["spearman_se"] == pytest.approx(math.sqrt(1.5 / 3))  # (1 + 1/2) / (6 - 3)
    assert out["n"] == 6


def test_rank_correlation_drops_missing_pairs() -> None:
    x = [1.0, 2.0, float("nan"), 4.0, 5.0]
    y = [5.0, 4.0, 1.0, 2.0, 1.0]
    out = rank_correlation(x, y)
    assert out["n"] == 4
    assert out["spearman"] == pytest.approx(-1.0)


def test_rank_correlation_constant_is_none() -> None:
    out = rank_correlation([1, 1, 1, 1], [1, 2, 3, 4])
    assert out["spearman"] is None and out["n"] == 4


def test_spearman_se_formula() -> None:
    assert spearman_se(0.5, 103) == pytest.approx(math.sqrt(1.125 / 100))
    assert spearman_se(0.5, 3) is None
