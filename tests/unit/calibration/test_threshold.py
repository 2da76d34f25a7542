"""Threshold fitting for probability-form judges (ragcourt.calibration.threshold)."""

from __future__ import annotations

import numpy as np
import pytest

from ragcourt.calibration.threshold import best_threshold, candidate_thresholds, cv_threshold


def test_candidates_are_midpoints_and_both_ends() -> None:
    c = candidate_thresholds([0.2, 0.6, 0.2])
    assert c[0] < 0.2 and c[1] == pytest.approx(0.4) and c[2] > 0.6 and len(c) == 3


def test_best_threshold_separates_separable_scores() -> None:
    scores = [0.1, 0.2, 0.3, 0.35, 0.4, 0.9]
    labels = [0, 0, 0, 1, 1, 1]
    t = best_threshold(scores, labels)
    assert 0.3 < t < 0.35  # the cut between the last 0 and the first 1


def test_cv_recovers_a_real_signal_and_not_noise() -> None:
    rng = np.random.default_rng(1)
    labels = rng.integers(0, 2, 300)
    signal = np.clip(0.35 + 0.2 * labels + rng.normal(0, 0.08, 300), 0, 1)
    fit = cv_threshold(signal.tolist(), labels.tolist(), folds=5, seed=0)
    assert fit.cv_kappa is not None and fit.cv_kappa > 0.7
    assert 0.35 < fit.threshold < 0.55 and len(fit.fold_thresholds) == 5 and fit.n == 300
    noise = cv_threshold(rng.random(300).tolist(), labels.tolist(), folds=5, seed=0)
    assert noise.cv_kappa is not None and abs(noise.cv_kappa) < 0.2
    # the in-sample kappa of the all-data fit is optimistic; CV is not
    assert noise.train_kappa is not None and noise.train_kappa > noise.cv_kappa


def test_cv_needs_at_least_one_item_per_fold() -> None:
    with pytest.raises(ValueError, match="3 items for 5 folds"):
        cv_threshold([0.1, 0.2, 0.3], [0, 1, 0])
