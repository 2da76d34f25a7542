"""Report section: the judges checked against the user's human labels (``calibrate`` stage).

Shows, next to the leaderboard, each system's accuracy three ways - judge-only (what the
pipeline reports), human-only, and prediction-powered (PPI: judge on every item, corrected
by the labels; ARES-style) - with 95% intervals, each judge's agreement with people
(accuracy, Cohen's kappa, Spearman where graded) and a warning naming every judge whose
kappa is below ``calibration.kappa_warning``.
"""

from __future__ import annotations

from typing import Any

from ragcourt.reporting.artifacts import Artifacts
from ragcourt.reporting.model import Section, Table, fmt, pct


def _iv(mid: Any, lo: Any, hi: Any) -> str:
    if mid is None:
        return "–"
    return f"{pct(mid)} [{pct(lo)}, {pct(hi)}]"


def _ci_num(mid: Any, lo: Any, hi: Any) -> str:
    if mid is None:
        return "–"
    return f"{fmt(mid)} [{fmt(lo)}, {fmt(hi)}]"


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
        sec.notes += art.note("calibration_summary")
        return sec
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
    ppi = art.table("calibration_ppi_systems")
    if ppi is not None and ppi.height:
        rows = [
            [
                r["system"],
                r["predictor"],
                fmt(r["n_labeled"]),
                _iv(r["judge_mean"], r["judge_lo"], r["judge_hi"]),
                _iv(r["human_mean"], r["human_lo"], r["human_hi"]),
                _iv(r["ppi_mean"], r["ppi_lo"], r["ppi_hi"]),
                fmt(r["width_ratio"]),
            ]
            for r in ppi.sort("system", "predictor").iter_rows(named=True)
        ]
        sec.tables.append(
            Table(
                [
                    "system",
                    "judge",
                    "labels",
                    "judge-only [95% CI]",
                    "human-only [95% CI]",
                    "PPI [95% CI]",
                    "PPI / human width",
                ],
                rows,
                caption="Accuracy per system",
            )
        )
    elif ppi is None:
        sec.notes += art.note("calibration_ppi_systems")
    agree = art.table("calibration_agreement")
    if agree is not None and agree.height:
        rows = [
            [
                r["judge"],
                r["role"],
                r["target"],
                fmt(r["n"]),
                _iv(r["accuracy"], r["accuracy_lo"], r["accuracy_hi"]),
                _ci_num(r["kappa"], r["kappa_lo"], r["kappa_hi"]),
                _ci_num(r["spearman"], r["spearman_lo"], r["spearman_hi"]),
                "LOW" if r["low_agreement"] else "",
            ]
            for r in agree.iter_rows(named=True)
        ]
        sec.tables.append(
            Table(
                ["judge", "role", "labels of", "n", "accuracy", "kappa", "Spearman", ""],
                rows,
                caption="Agreement of each judge with the human labels",
            )
        )
    elif agree is None:
        sec.notes += art.note("calibration_agreement")
    sec.notes += [f"Warning: {w}" for w in warnings]
    for what in summary.not_corrected:
        sec.notes.append(f"Not corrected by the labels: {what}")
    return sec
