"""The calibration itself, without I/O: labels matched to the data, judge-human agreement,
PPI tables and the summary (:func:`compute`; the ``calibrate`` stage wraps it).

Steps: resolve the label records and match them to the current items
(:mod:`~ragcourt.calibration.label_matching`); build the judge table with one column per
predictor (:mod:`~ragcourt.calibration.judge_table`); agreement of each judge with the labels
(:mod:`~ragcourt.calibration.judge_agreement`); PPI per system and per pair
(:mod:`~ragcourt.calibration.ppi_tables`); the summary with every warning, and what is and is
not corrected.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from ragcourt.calibration.judge_agreement import agreement_table, low_agreement
from ragcourt.calibration.judge_table import labelled_judge_table, predictors
from ragcourt.calibration.label_matching import answer_labels, label_warnings, passage_labels
from ragcourt.calibration.labels import AnswerLabel, PassageLabel, UndoRecord, resolve_labels
from ragcourt.calibration.params import CalibrationParams
from ragcourt.calibration.ppi_tables import ppi_pairs, ppi_system_warnings, ppi_systems
from ragcourt.calibration.sampling import question_strata
from ragcourt.calibration.summaries import CalibrationSummary

log = logging.getLogger("ragcourt.calibration")


@dataclass(frozen=True)
class CalibrationResult:
    agreement: pl.DataFrame
    ppi_systems: pl.DataFrame
    ppi_pairs: pl.DataFrame
    summary: CalibrationSummary


def corrected(with_pairwise: bool) -> list[str]:
    """What the labels correct (the summary's ``corrected``)."""
    out = [
        "per-system accuracy: PPI over the final DAFE verdict, the correctness score and each "
        "primary judge's verdict (ppi_systems)",
        "per-pair accuracy difference: PPI over the per-question difference of the same "
        "predictors, on questions where both systems' answers are labelled (ppi_pairs, "
        "target accuracy_diff)",
    ]
    if with_pairwise:
        out.append(
            "per-pair DICE win rate of system_a: PPI over the tournament's per-question "
            "score_a, with the human outcome (1 + Y_a - Y_b) / 2 from the two answer labels "
            "(ppi_pairs, target win_rate)"
        )
    return out


def not_corrected(with_pairwise: bool) -> list[str]:
    """What the labels do not correct (the summary's ``not_corrected``)."""
    out = [
        "Elo, Bradley-Terry ratings and the leaderboard order: they aggregate the "
        "uncorrected pairwise judgements over the Swiss pairings",
        "the DAFE arbitrator alone (it only judges disagreements: agreement table only)",
        "retrieval measures and UDCG (passage labels measure relevance-judge agreement only)",
    ]
    if with_pairwise:
        out.append(
            "the human win-rate outcome is derived from absolute correctness: a tie when both "
            "answers are correct or both wrong, so a judge preferring the better of two "
            "correct answers counts as an error there"
        )
    else:
        out.append("the tournament (no pairwise table given)")
    return out


def compute(
    qa: pl.DataFrame,
    answers: pl.DataFrame,
    verdicts: pl.DataFrame,
    correctness: pl.DataFrame,
    relevance: pl.DataFrame | None,
    pairwise: pl.DataFrame | None,
    records: Sequence[AnswerLabel | PassageLabel | UndoRecord],
    params: CalibrationParams | None = None,
    files: Sequence[str] = (),
) -> CalibrationResult:
    """Agreement, PPI tables and summary from the frames and label records (no I/O)."""
    p = params or CalibrationParams()
    resolved = resolve_labels(records)
    strata = question_strata(verdicts, correctness, p.correctness_threshold)
    a_lab, a_counts = answer_labels(
        resolved, qa, answers, verdicts, correctness, p.correctness_threshold
    )
    p_lab, p_counts, warnings = passage_labels(resolved, qa, answers, relevance)
    warnings += label_warnings(a_counts, p_counts)

    preds = predictors(verdicts)
    judged = labelled_judge_table(verdicts, correctness, strata, preds, a_lab)
    systems = sorted(judged["system"].unique().to_list())

    agreement = agreement_table(judged, p_lab, relevance, p)
    low, low_warnings = low_agreement(agreement, p.kappa_warning)
    warnings += low_warnings

    per_system = ppi_systems(judged, systems, preds, p)
    warnings += ppi_system_warnings(per_system)
    per_pair = ppi_pairs(judged, systems, preds, pairwise, strata, p)
    if a_counts.usable and per_system["ppi_mean"].is_null().all():
        warnings.append(
            f"no system has {p.min_labels} usable answer labels: no PPI estimate yet "
            "(label more items)"
        )
    for w in warnings:
        log.warning(w)

    summary = CalibrationSummary(
        label_files=list(files),
        labelers=sorted({r.labeler for r in records}),
        n_records=len(records),
        answers=a_counts,
        passages=p_counts,
        alpha=p.alpha,
        min_labels=p.min_labels,
        kappa_warning=p.kappa_warning,
        systems=systems,
        predictors=[n for n, _, _ in preds],
        low_agreement=low,
        warnings=warnings,
        corrected=corrected(pairwise is not None),
        not_corrected=not_corrected(pairwise is not None),
    )
    return CalibrationResult(agreement, per_system, per_pair, summary)
