"""Elo expected score sign, update, upset weighting."""

import numpy as np
import pytest

from ragcourt.tournament.elo import expected_score, update, update_arrays, upset_k


def test_expected_score_sign_higher_rated_expects_more() -> None:
    assert expected_score(1600, 1500) > 0.5
    assert expected_score(1500, 1600) < 0.5
    assert expected_score(1500, 1500) == 0.5
    assert expected_score(1900, 1500) == pytest.approx(10 / 11)  # 400 points -> 10:1 odds
    assert expected_score(1600, 1500) + expected_score(1500, 1600) == pytest.approx(1.0)


def test_update_formula_and_zero_sum() -> None:
    # equal ratings, A takes 7 of 10 questions: R_A' = 1500 + 32 * (0.7 - 0.5) = 1506.4
    up = update(1500, 1500, 7.0, 3.0, k=32, upset_weighting=True)
    assert up.r_a == pytest.approx(1506.4)
    assert up.r_b == pytest.approx(1493.6)
    assert up.k == 32  # no upset between equals


def test_upset_weighting_grows_k_only_for_upsets() -> None:
    # lower-rated A (1500) beats B (1700): K = 32 * (1 + 200/400) = 48
    assert upset_k(32, 1500, 1700, 0.8) == pytest.approx(48)
    assert upset_k(32, 1700, 1500, 0.2) == pytest.approx(48)  # same upset seen from B
    assert upset_k(32, 1700, 1500, 0.8) == 32  # favourite wins: plain K
    up = update(1500, 1700, 8.0, 2.0, k=32, upset_weighting=True)
    e = expected_score(1500, 1700)
    assert up.r_a == pytest.approx(1500 + 48 * (0.8 - e))
    assert up.r_a + up.r_b == pytest.approx(3200)
    plain = update(1500, 1700, 8.0, 2.0, k=32, upset_weighting=False)
    assert plain.k == 32 and plain.r_a < up.r_a


def test_all_error_match_changes_nothing() -> None:
    up = update(1550, 1450, 0.0, 0.0)
    assert (up.r_a, up.r_b, up.k) == (1550, 1450, 0.0)


def test_update_arrays_vectorises() -> None:
    ra, rb, _, _ = update_arrays(
        np.array([1500.0, 1600.0]),
        np.array([1500.0, 1500.0]),
        np.array([7.0, 2.0]),
        np.array([3.0, 8.0]),
    )
    assert ra[0] == pytest.approx(update(1500, 1500, 7, 3).r_a)
    assert ra[1] == pytest.approx(update(1600, 1500, 2, 8).r_a)
    assert rb[1] == pytest.approx(update(1600, 1500, 2, 8).r_b)
