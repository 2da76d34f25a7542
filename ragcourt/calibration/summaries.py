"""The calibration summary ``data/calibration/summary.json`` (stage ``calibrate``) as a model.

:class:`CalibrationSummary`: the label files and labellers, what became of the answer and
passage labels (:class:`LabelCounts`: usable, can't tell, conflicting, stale), the settings
(alpha, min_labels, kappa_warning), the judges with low agreement, warnings, and what is and
is not corrected by the labels. The stage writes ``model_dump(mode="json")``; the report reads
the file back with ``CalibrationSummary.model_validate``.
"""

from __future__ import annotations

from pydantic import BaseModel


class LabelCounts(BaseModel):
    """Effective labels of one kind and what became of them."""

    labeled: int = 0  # items with an effective label
    usable: int = 0  # used by agreement / PPI
    cant_tell: int = 0
    conflicting: int = 0  # labellers disagree
    stale: int = 0  # the item changed (or is gone) since it was labelled


class CalibrationSummary(BaseModel):
    """``summary.json`` of the calibrate stage."""

    label_files: list[str]
    labelers: list[str]
    n_records: int
    answers: LabelCounts
    passages: LabelCounts
    alpha: float
    min_labels: int
    kappa_warning: float
    systems: list[str]
    predictors: list[str]
    low_agreement: list[str]  # judges (judge/role) with kappa below kappa_warning
    warnings: list[str]
    corrected: list[str]
    not_corrected: list[str]
