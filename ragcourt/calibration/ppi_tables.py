"""The PPI tables of the ``calibrate`` stage (:mod:`ragcourt.calibration.ppi` estimates).

* ``ppi_systems`` (:data:`PPI_SYSTEMS_SCHEMA`): per system and predictor, the judge-only,
  human-only and PPI estimates of accuracy with (1 − alpha) intervals;
* ``ppi_pairs`` (:data:`PPI_PAIRS_SCHEMA`): per pair of systems, the accuracy difference (PPI
  on the per-question difference Y_a − Y_b over questions where both answers are labelled)
  and, with the tournament's ``pairwise`` table, the DICE win rate of system_a (judge: mean
  ``score_a`` of the valid judgements of the question; human outcome (1 + Y_a − Y_b) / 2).

Labelled questions are weighted by post-stratification over the sampling strata: w = N_h / m_h,
so over-sampled contested questions do not bias the estimates; strata without labels are
named in the row's note.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from ragcourt.calibration.judge_table import Predictor
from ragcourt.calibration.params import CalibrationParams
from ragcourt.calibration.ppi import (
    Estimates,
    EstimateSettings,
    FloatArray,
    Interval,
    poststratified_weights,
    ppi_difference,
)
from ragcourt.calibration.ppi import estimate as ppi_estimate
from ragcourt.core.schemas import PolarsDtype, frame_schema

PPI_SYSTEMS_SCHEMA: dict[str, PolarsDtype] = frame_schema("calibration_ppi_systems")

PPI_PAIRS_SCHEMA: dict[str, PolarsDtype] = frame_schema("calibration_ppi_pairs")


def _interval_cols(prefix: str, iv: Interval | None) -> dict[str, float | None]:
    if iv is None:
        return {f"{prefix}_mean": None, f"{prefix}_lo": None, f"{prefix}_hi": None}
    return {f"{prefix}_mean": iv.estimate, f"{prefix}_lo": iv.lo, f"{prefix}_hi": iv.hi}


def _est_cols(est: Estimates, notes: Sequence[str]) -> dict[str, Any]:
    ratio = None
    if est.ppi is not None and est.human is not None and est.human.width > 0:
        ratio = est.ppi.width / est.human.width
    return {
        "n_labeled": est.n_labeled,
        "n_unlabeled": est.n_unlabeled,
        "lam": est.lam,
        **_interval_cols("judge", est.judge),
        **_interval_cols("human", est.human),
        **_interval_cols("ppi", est.ppi),
        "width_ratio": ratio,
        "note": "; ".join([*est.notes, *notes]) or None,
    }


def _excludes(iv: Interval | None, value: float) -> bool | None:
    return None if iv is None else not iv.covers(value)


def _weights(
    lab_strata: Sequence[str], pop_strata: Sequence[str]
) -> tuple[np.ndarray[Any, np.dtype[np.float64]] | None, list[str]]:
    if not lab_strata:
        return None, []
    sw = poststratified_weights(lab_strata, pop_strata)
    notes = []
    if sw.uncovered:
        strata = ", ".join(f"{s} ({n})" for s, n in sw.uncovered.items())
        notes.append(
            f"strata without labels, not corrected: {strata}; "
            f"{sw.uncovered_share:.0%} of the judged items"
        )
    return sw.weights, notes


def _settings(p: CalibrationParams, weights: FloatArray | None) -> EstimateSettings:
    """The keyword arguments of :func:`ragcourt.calibration.ppi.estimate` under the params."""
    return {
        "alpha": p.alpha,
        "weights": weights,
        "min_labels": p.min_labels,
        "power_tuning": p.power_tuning,
    }


def ppi_systems(
    judged: pl.DataFrame, systems: Sequence[str], preds: Sequence[Predictor], p: CalibrationParams
) -> pl.DataFrame:
    """Judge-only, human-only and PPI accuracy per system and predictor."""
    rows: list[dict[str, Any]] = []
    for s in systems:
        js = judged.filter(pl.col("system") == s)
        for name, role, _ in preds:
            col = f"pred:{name}"
            pop = js.filter(pl.col(col).is_not_null())
            lab = pop.filter(pl.col("y").is_not_null())
            w, notes = _weights(lab["stratum"].to_list(), pop["stratum"].to_list())
            est = ppi_estimate(
                lab["y"].to_numpy(), lab[col].to_numpy(), pop[col].to_numpy(), **_settings(p, w)
            )
            rows.append({"system": s, "predictor": name, "role": role} | _est_cols(est, notes))
    return pl.DataFrame(rows, schema=PPI_SYSTEMS_SCHEMA)


def ppi_system_warnings(table: pl.DataFrame) -> list[str]:
    """Warnings on the per-system table: strata without labels, and PPI intervals wider
    than the human-only ones."""
    warnings = []
    hit = table.filter(pl.col("note").str.contains("strata without labels"))
    if hit.height:
        warnings.append(
            f"{hit.height} system/predictor estimate(s) have sampling strata without labels "
            "(see the note column): those strata are not corrected"
        )
    wider = table.filter(pl.col("width_ratio") > 1.0)
    if wider.height:
        which = ", ".join(f"{r['system']}/{r['predictor']}" for r in wider.iter_rows(named=True))
        warnings.append(
            f"the PPI interval is wider than the human-only one for {which}: that judge's "
            "errors add more noise than its scores add information; prefer the human-only "
            "interval there (or set power_tuning, with 100+ labels)"
        )
    return warnings


def _pair_row(
    sa: str, sb: str, target: str, predictor: str, null: float, est: Estimates, notes: list[str]
) -> dict[str, Any]:
    return {
        "system_a": sa,
        "system_b": sb,
        "target": target,
        "predictor": predictor,
        "null_value": null,
        **_est_cols(est, notes),
        "ppi_excludes_null": _excludes(est.ppi, null),
        "judge_excludes_null": _excludes(est.judge, null),
    }


def _difference_rows(
    sa: str, sb: str, ab: pl.DataFrame, preds: Sequence[Predictor], p: CalibrationParams
) -> list[dict[str, Any]]:
    """The accuracy difference of system_a and system_b per predictor (``ab``: their judge
    rows joined by question, system_b's columns suffixed ``_b``)."""
    rows = []
    for name, _, _ in preds:
        col = f"pred:{name}"
        pop = ab.filter(pl.col(col).is_not_null() & pl.col(f"{col}_b").is_not_null())
        lab = pop.filter(pl.col("y").is_not_null() & pl.col("y_b").is_not_null())
        w, notes = _weights(lab["stratum"].to_list(), pop["stratum"].to_list())
        est = ppi_difference(
            lab["y"].to_numpy(),
            lab["y_b"].to_numpy(),
            lab[col].to_numpy(),
            lab[f"{col}_b"].to_numpy(),
            pop[col].to_numpy(),
            pop[f"{col}_b"].to_numpy(),
            **_settings(p, w),
        )
        rows.append(_pair_row(sa, sb, "accuracy_diff", name, 0.0, est, notes))
    return rows


def _tournament_row(
    sa: str,
    sb: str,
    pairwise: pl.DataFrame,
    a: pl.DataFrame,
    b: pl.DataFrame,
    strata: pl.DataFrame,
    p: CalibrationParams,
) -> dict[str, Any]:
    """PPI of system_a's DICE win rate against system_b (module doc)."""
    judged = (
        pairwise.filter(
            (pl.col("system_a") == sa)
            & (pl.col("system_b") == sb)
            & pl.col("error").is_null()
            & pl.col("score_a").is_not_null()
        )
        .group_by("question_id", maintain_order=True)  # row order fixes the float sums
        .agg(pl.col("score_a").mean().alias("shat"))
        .join(strata, on="question_id", how="left")
        .with_columns(pl.col("stratum").fill_null("unjudged"))
    )
    human = (
        a.select("question_id", "y")
        .join(b.select("question_id", pl.col("y").alias("y_b")), on="question_id")
        .filter(pl.col("y").is_not_null() & pl.col("y_b").is_not_null())
        .select("question_id", ((1 + pl.col("y") - pl.col("y_b")) / 2).alias("s"))
    )
    lab = judged.join(human, on="question_id", how="inner")
    w, notes = _weights(lab["stratum"].to_list(), judged["stratum"].to_list())
    est = ppi_estimate(
        lab["s"].to_numpy(),
        lab["shat"].to_numpy(),
        judged["shat"].to_numpy(),
        alpha=p.alpha,
        weights=w,
        min_labels=p.min_labels,
        power_tuning=p.power_tuning,
    )
    if judged.height == 0:
        notes.append("the tournament judged no question of this pair")
    return _pair_row(sa, sb, "win_rate", "tournament", 0.5, est, notes)


def ppi_pairs(
    judged: pl.DataFrame,
    systems: Sequence[str],
    preds: Sequence[Predictor],
    pairwise: pl.DataFrame | None,
    strata: pl.DataFrame,
    p: CalibrationParams,
) -> pl.DataFrame:
    """Per pair of systems (a < b): the accuracy difference per predictor and, with the
    ``pairwise`` table, system_a's win rate."""
    rows: list[dict[str, Any]] = []
    for i, sa in enumerate(systems):
        for sb in systems[i + 1 :]:
            a = judged.filter(pl.col("system") == sa)
            b = judged.filter(pl.col("system") == sb).drop("stratum")
            ab = a.join(b, on="question_id", how="inner", suffix="_b")
            rows += _difference_rows(sa, sb, ab, preds, p)
            if pairwise is not None:
                rows.append(_tournament_row(sa, sb, pairwise, a, b, strata, p))
    return pl.DataFrame(rows, schema=PPI_PAIRS_SCHEMA)
