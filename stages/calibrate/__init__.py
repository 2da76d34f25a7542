"""The ``calibrate`` stage: ``python -m stages calibrate`` under DVC, a task in the Prefect flow."""

from __future__ import annotations

from ragcourt.orchestration.stage_def import Dep, StageDef, arts

STAGE = StageDef(
    "calibrate",
    "ragcourt.calibration.stage:run_stage",
    "Human labels (calibration.labels_dir) vs the judges: agreement with CIs, and\n"
    "prediction-powered (PPI) system accuracies next to judge-only and human-only ones.\n"
    "Without label files it writes empty tables and says nothing was calibrated.",
    deps=(
        Dep(param="calibration.labels_dir"),
        *arts("qa", "answers", "verdicts", "correctness", "relevance", "pairwise"),
    ),
    params=("calibration",),
)
