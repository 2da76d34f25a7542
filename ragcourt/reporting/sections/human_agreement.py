"""Report section: the judges checked against the user's human labels (``calibrate`` stage).

Shows, next to the leaderboard, each system's accuracy three ways - judge-only (what the
pipeline reports), human-only, and prediction-powered (PPI: judge on every item, corrected
by the labels; ARES-style) - with 95% intervals, each judge's agreement with people
(accuracy, Cohen's kappa, Spearman where graded) and a warning naming every judge whose
kappa is below ``calibration.kappa_warning``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ragcourt.reporting.artifacts import Artifacts
from ragcourt.reporting.model import Section, fmt, pct
from ragcourt.reporting.sections.common import add_row_table, note_missing


def _ci(r: dict[str, Any], mid: str, stem: str, form: Callable[[Any], str] = pct) -> str:
    """Row ``r``'s ``mid [lo, hi]`` (columns ``mid``, ``<stem>_lo``, ``<stem>_hi``) written
    with ``form``; "–" when ``mid`` is null."""
    if r[mid] is None:
        return "–"
    return f"{form(r[mid])} [{form(r[f'{stem}_lo'])}, {form(r[f'{stem}_hi'])}]"


PPI_COLUMNS = [
    "system",
    "judge",
    "labels",
    "judge-only [95% CI]",
    "human-only [95% CI]",
    "PPI [95% CI]",
    "PPI / human width",
]
AGREEMENT_COLUMNS = ["judge", "role", "labels of", "n", "accuracy", "kappa", "Spearman", ""]


def _ppi_cells(r: dict[str, Any]) -> list[str]:
    """One ``calibration_ppi_systems`` row: a system's accuracy three ways."""
    return [
        r["system"],
        r["predictor"],
        fmt(r["n_labeled"]),
        *(_ci(r, f"{e}_mean", e) for e in ("judge", "human", "ppi")),
        fmt(r["width_ratio"]),
    ]


def _agreement_cells(r: dict[str, Any]) -> list[str]:
    """One ``calibration_agreement`` row: a judge's agreement with people."""
    return [
        r["judge"],
        r["role"],
        r["target"],
        fmt(r["n"]),
        _ci(r, "accuracy", "accuracy"),
        _ci(r, "kappa", "kappa", fmt),
        _ci(r, "spearman", "spearman", fmt),
        "LOW" if r["low_agreement"] else "",
    ]


# artifact table, its columns, a row's cells, caption, row order
_TABLES: tuple[
    tuple[str, list[str], Callable[[dict[str, Any]], list[str]], str, tuple[str, ...]], ...
] = (
    (
        "calibration_ppi_systems",
        PPI_COLUMNS,
        _ppi_cells,
        "Accuracy per system",
        ("system", "predictor"),
    ),
    (
        "calibration_agreement",
        AGREEMENT_COLUMNS,
        _agreement_cells,
        "Agreement of each judge with the human labels",
        (),
    ),
)


def human_labels(art: Artifacts) -> Section:
    """Judge-human agreement and judge-only / human-only / PPI accuracy per system."""
    sec = Section(
        "human_labels",
        "Human labels: judge agreement and prediction-powered scores",
        "A few human labels on this data check the label-free judges: each judge's agreement "
        "with people, and each system's accuracy judged by the judges alone, by the labels "
        "alone, and by prediction-powered inference (the judges on every answer, their bias "
        "corrected by the labels; the interval accounts for the judges' errors).",
    )
    summary = art.calibration_summary()
    if summary is None:
        return note_missing(sec, art, "calibration_summary")
    warnings = list(summary.warnings)
    sec.facts += [
        ("label files", fmt(len(summary.label_files))),
        ("labelled answers used", fmt(summary.answers.usable)),
        ("labelled passages used", fmt(summary.passages.usable)),
        ("kappa warning below", fmt(summary.kappa_warning)),
    ]
    if not summary.label_files:
        sec.notes += warnings
        return sec
    for name, columns, cells, caption, sort_by in _TABLES:
        add_row_table(sec, art, name, columns, cells, caption, sort_by)
    sec.notes += [f"Warning: {w}" for w in warnings]
    for what in summary.not_corrected:
        sec.notes.append(f"Not corrected by the labels: {what}")
    return sec
