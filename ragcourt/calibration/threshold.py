"""Decision thresholds for probability-form judges, fitted on labelled train data.

``best_threshold``: the cut t among the midpoints of consecutive distinct scores (and the
ends) that maximises Cohen's kappa of ``score >= t`` against the 0/1 labels (ties: the
smallest such t). ``cv_threshold``: k-fold cross-validation of that fit, each fold's
threshold chosen on the other k-1 folds and kappa measured on the held-out fold; the pooled
held-out predictions give the CV kappa and macro-F1 (spec §2, QA filters).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict

from ragcourt.judging.agreement import binary_agreement


class ThresholdFit(BaseModel):
    """A threshold fitted on all items, and its k-fold cross-validated agreement."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    threshold: float
    train_kappa: float | None
    cv_kappa: float | None
    cv_macro_f1: float | None
    fold_thresholds: list[float]
    n: int
    folds: int


def _kappa(labels: np.ndarray, pred: np.ndarray) -> float:
    k = binary_agreement(labels.tolist(), pred.tolist())["kappa"]
    return -1.0 if k is None else float(k)


def candidate_thresholds(scores: Sequence[float]) -> list[float]:
    """Midpoints of consecutive distinct scores, plus one below the minimum and one above
    the maximum (every distinct split of the sorted scores once)."""
    u = np.unique(np.asarray(scores, dtype=float))
    if u.size == 0:
        return [0.5]
    mids = ((u[:-1] + u[1:]) / 2).tolist()
    return [float(u[0] - 1e-9), *map(float, mids), float(u[-1] + 1e-9)]


def best_threshold(scores: Sequence[float], labels: Sequence[int]) -> float:
    """The threshold t maximising kappa of ``score >= t`` vs ``labels`` (smallest on ties)."""
    s, y = np.asarray(scores, dtype=float), np.asarray(labels, dtype=int)
    if s.shape != y.shape:
        raise ValueError(f"scores ({s.size}) and labels ({y.size}) differ in length")
    best_t, best_k = 0.5, -2.0
    for t in candidate_thresholds(s.tolist()):
        k = _kappa(y, (s >= t).astype(int))
        if k > best_k:
            best_t, best_k = t, k
    return best_t


def cv_threshold(
    scores: Sequence[float], labels: Sequence[int], folds: int = 5, seed: int = 0
) -> ThresholdFit:
    """k-fold CV of :func:`best_threshold` (stratified by label, shuffled with ``seed``)."""
    s, y = np.asarray(scores, dtype=float), np.asarray(labels, dtype=int)
    if s.size < folds:
        raise ValueError(f"cv_threshold: {s.size} items for {folds} folds")
    rng = np.random.default_rng(seed)
    fold_of = np.empty(s.size, dtype=int)
    for cls in (0, 1):  # stratified: each class dealt round-robin over the folds
        idx = rng.permutation(np.flatnonzero(y == cls))
        fold_of[idx] = np.arange(idx.size) % folds
    pred = np.empty(s.size, dtype=int)
    fold_ts: list[float] = []
    for f in range(folds):
        test = fold_of == f
        t = best_threshold(s[~test].tolist(), y[~test].tolist())
        fold_ts.append(round(t, 4))
        pred[test] = (s[test] >= t).astype(int)
    cv = binary_agreement(y.tolist(), pred.tolist())
    t_all = best_threshold(s.tolist(), y.tolist())
    train = binary_agreement(y.tolist(), (s >= t_all).astype(int).tolist())
    return ThresholdFit(
        threshold=round(t_all, 4),
        train_kappa=train["kappa"],
        cv_kappa=cv["kappa"],
        cv_macro_f1=cv["macro_f1"],
        fold_thresholds=fold_ts,
        n=int(s.size),
        folds=folds,
    )
