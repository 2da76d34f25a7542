"""The ``calibrate`` stage: judge-human agreement and PPI-corrected system scores.

Inputs: the pipeline's ``qa``, ``answers``, ``verdicts``, ``correctness`` (and, optional,
``relevance`` and the tournament's ``pairwise``) tables and the human label files
(``<labels_dir>/*.jsonl``, :mod:`ragcourt.calibration.labels`). The stage runs only when label
files exist (:func:`has_labels`); :func:`run` raises a one-line error otherwise, and
:func:`run_stage` writes empty tables and a summary that says nothing was calibrated.

Outputs (:class:`CalibrationOutputs`), computed by :func:`ragcourt.calibration.compute.compute`:

* ``agreement`` (:data:`ragcourt.calibration.agreement.AGREEMENT_SCHEMA`): per judge (each DAFE
  judge in its role, the final DAFE verdict, correctness at ``correctness_threshold``, passage
  relevance) accuracy, Cohen's kappa and Spearman with bootstrap CIs and n
  (:mod:`ragcourt.calibration.judge_agreement`);
* ``ppi_systems`` and ``ppi_pairs`` (:data:`PPI_SYSTEMS_SCHEMA`, :data:`PPI_PAIRS_SCHEMA`):
  judge-only, human-only and PPI estimates per system and per pair of systems
  (:mod:`ragcourt.calibration.ppi_tables`);
* ``summary`` (:class:`CalibrationSummary`, JSON): label counts (stale, conflicting and "can't
  tell" labels are not used: :mod:`ragcourt.calibration.label_matching`), warnings and what is
  and is not corrected.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from ragcourt.calibration.agreement import AGREEMENT_SCHEMA
from ragcourt.calibration.compute import CalibrationResult, compute
from ragcourt.calibration.labels import label_files, load_labels
from ragcourt.calibration.params import CalibrationParams, CalibrationView
from ragcourt.calibration.ppi_tables import PPI_PAIRS_SCHEMA, PPI_SYSTEMS_SCHEMA
from ragcourt.calibration.sampling import SampleParams, sample_items
from ragcourt.calibration.summaries import CalibrationSummary, LabelCounts
from ragcourt.core import catalog
from ragcourt.core.errors import RagcourtError
from ragcourt.core.io import read_table, write_json, write_parquet
from ragcourt.core.schemas import empty

log = logging.getLogger("ragcourt.calibration")


@dataclass(frozen=True)
class CalibrationInputs:
    """Input paths; ``relevance``/``pairwise`` None (or absent files) skip those parts."""

    labels_dir: Path
    qa: Path
    answers: Path
    verdicts: Path
    correctness: Path
    relevance: Path | None = None
    pairwise: Path | None = None

    @classmethod
    def default(cls, root: Path = Path("."), labels_dir: Path | None = None) -> CalibrationInputs:
        """The catalogued pipeline artifacts under ``root`` and ``root/data/labels``."""
        return cls(
            labels_dir=labels_dir if labels_dir is not None else root / catalog.DEFAULT_LABELS_DIR,
            qa=root / catalog.path("qa"),
            answers=root / catalog.path("answers"),
            verdicts=root / catalog.path("verdicts"),
            correctness=root / catalog.path("correctness"),
            relevance=root / catalog.path("relevance"),
            pairwise=root / catalog.path("pairwise"),
        )


@dataclass(frozen=True)
class CalibrationOutputs:
    """Output paths (Parquet tables and the JSON summary)."""

    agreement: Path
    ppi_systems: Path
    ppi_pairs: Path
    summary: Path

    @classmethod
    def default(cls, root: Path = Path(".")) -> CalibrationOutputs:
        return cls(
            agreement=root / catalog.path("calibration_agreement"),
            ppi_systems=root / catalog.path("calibration_ppi_systems"),
            ppi_pairs=root / catalog.path("calibration_ppi_pairs"),
            summary=root / catalog.path("calibration_summary"),
        )


def has_labels(labels_dir: Path) -> bool:
    """True when ``labels_dir`` holds at least one label file (``*.jsonl``)."""
    return bool(label_files(labels_dir))


def _optional(path: Path | None, table: str) -> pl.DataFrame | None:
    if path is None or not path.is_file():
        return None
    return read_table(path, table)


def _judged_tables(
    inputs: CalibrationInputs,
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame, pl.DataFrame, pl.DataFrame | None]:
    """(qa, answers, verdicts, correctness, relevance or None): what the labels are set
    against, read from the artifacts ``inputs`` names."""
    return (
        read_table(inputs.qa, "qa"),
        read_table(inputs.answers, "answers"),
        read_table(inputs.verdicts, "verdicts"),
        read_table(inputs.correctness, "correctness"),
        _optional(inputs.relevance, "relevance"),
    )


def sample_from_artifacts(sample_params: SampleParams, inputs: CalibrationInputs) -> pl.DataFrame:
    """The labelling sample (:func:`ragcourt.calibration.sampling.sample_items`) of the
    artifacts named by ``inputs`` (``relevance`` optional: no passage items without it)."""
    return sample_items(*_judged_tables(inputs), sample_params)


def run(
    params: CalibrationParams | None,
    inputs: CalibrationInputs,
    outputs: CalibrationOutputs,
) -> CalibrationSummary:
    """Read the artifacts and label files, :func:`compute`, write the outputs atomically."""
    files = label_files(inputs.labels_dir)
    if not files:
        raise RagcourtError(
            f"{inputs.labels_dir}: no label files (*.jsonl); label items with "
            "`ragcourt label serve` (or export/import a CSV) first"
        )
    records = load_labels(inputs.labels_dir)
    result = compute(
        *_judged_tables(inputs),
        _optional(inputs.pairwise, "pairwise"),
        records,
        params,
        [str(f) for f in files],
    )
    write_parquet(result.agreement, outputs.agreement)
    write_parquet(result.ppi_systems, outputs.ppi_systems)
    write_parquet(result.ppi_pairs, outputs.ppi_pairs)
    write_json(result.summary.model_dump(mode="json"), outputs.summary)
    return result.summary


def no_labels_summary(params: CalibrationParams, labels_dir: Path) -> CalibrationSummary:
    """The summary of a run without label files: nothing is corrected, and it says so."""
    return CalibrationSummary(
        label_files=[],
        labelers=[],
        n_records=0,
        answers=LabelCounts(),
        passages=LabelCounts(),
        alpha=params.alpha,
        min_labels=params.min_labels,
        kappa_warning=params.kappa_warning,
        systems=[],
        predictors=[],
        low_agreement=[],
        warnings=[
            f"no label files under {labels_dir}: the judges are not checked against people "
            "(label a sample with `ragcourt label serve`, or export/import a CSV)"
        ],
        corrected=[],
        not_corrected=["everything: there are no human labels"],
    )


def run_stage(params: CalibrationView) -> CalibrationSummary:
    """Stage ``calibrate``: judge-human agreement and PPI estimates from the label files
    under ``calibration.labels_dir``; without label files it writes empty tables and a
    summary that says nothing was calibrated (the stage never fails for lack of labels)."""
    settings = params.calibration
    inputs = CalibrationInputs.default(labels_dir=Path(settings.labels_dir))
    outputs = CalibrationOutputs.default()
    if has_labels(inputs.labels_dir):
        return run(settings, inputs, outputs)
    summary = no_labels_summary(settings, inputs.labels_dir)
    write_parquet(empty("calibration_agreement"), outputs.agreement, "calibration_agreement")
    write_parquet(empty("calibration_ppi_systems"), outputs.ppi_systems, "calibration_ppi_systems")
    write_parquet(empty("calibration_ppi_pairs"), outputs.ppi_pairs, "calibration_ppi_pairs")
    write_json(summary.model_dump(mode="json"), outputs.summary)
    log.info("calibrate: %s", summary.warnings[0])
    return summary


__all__ = [
    "AGREEMENT_SCHEMA",
    "PPI_PAIRS_SCHEMA",
    "PPI_SYSTEMS_SCHEMA",
    "CalibrationInputs",
    "CalibrationOutputs",
    "CalibrationParams",
    "CalibrationResult",
    "CalibrationSummary",
    "LabelCounts",
    "compute",
    "has_labels",
    "no_labels_summary",
    "run",
    "run_stage",
    "sample_from_artifacts",
]
