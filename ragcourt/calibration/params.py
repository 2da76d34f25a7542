"""The ``calibration`` section of ``params.yaml``: human labels vs the judges (PPI)."""

from __future__ import annotations

from typing import Protocol

from pydantic import (
    Field,
    StrictBool,
    StrictInt,
)

from ragcourt.core.catalog import (
    DEFAULT_LABELS_DIR,
)
from ragcourt.core.params import (
    CoreView,
    NonEmptyStr,
    Strict,
)


class CalibrationParams(Strict):
    """Human labels vs the judges (``calibrate`` stage, PPI; spec §7): label files are read
    from ``labels_dir``; intervals are (1 − alpha); PPI needs ``min_labels`` labelled items."""

    labels_dir: NonEmptyStr = DEFAULT_LABELS_DIR
    alpha: float = Field(default=0.05, gt=0.0, lt=1.0)
    min_labels: StrictInt = Field(default=10, ge=2)
    kappa_warning: float = Field(default=0.4, ge=-1.0, le=1.0)  # warn below this kappa
    bootstrap_resamples: StrictInt = Field(default=1000, ge=100, le=100_000)
    seed: StrictInt = 0
    power_tuning: StrictBool = False  # PPI++ λ from the data (under-covers with few labels)
    # an answer with correctness >= this counts as correct (agreement of the correctness judge)
    correctness_threshold: float = Field(default=0.5, ge=0.0, le=1.0)


class CalibrationView(CoreView, Protocol):
    """The params the calibrate stage reads: the shared ones and ``calibration``."""

    calibration: CalibrationParams
