"""The tables the calibrate stage writes (:data:`ragcourt.core.schemas.TABLES`)."""

import polars as pl

from ragcourt.core.schemas import Columns, PolarsDtype

_PPI_ESTIMATE: dict[str, PolarsDtype | str] = {  # judge-only, human-only and PPI estimates
    "n_labeled": pl.Int64,  # labelled items (questions for pairs) used, with a judge value
    "n_unlabeled": pl.Int64,  # all items with a judge value (the labelled ones included)
    "lam": pl.Float64,  # λ: 1 = plain PPI; power-tuned (0 = judge ignored) if power_tuning
    "judge_mean": pl.Float64,  # label-free estimate (what the pipeline reports)
    "judge_lo": pl.Float64,
    "judge_hi": pl.Float64,
    "human_mean": pl.Float64,  # labels only (post-stratified)
    "human_lo": pl.Float64,
    "human_hi": pl.Float64,
    "ppi_mean": pl.Float64,  # prediction-powered: judge on all items, corrected by labels
    "ppi_lo": pl.Float64,
    "ppi_hi": pl.Float64,
    "width_ratio": pl.Float64,  # PPI interval width / human-only interval width
    "note": pl.String,  # why an estimate is missing, strata without labels, ...
}


TABLES: dict[str, Columns] = {
    # calibrate: human labels vs the judges (ragcourt/calibration)
    "calibration_agreement": {
        "judge": pl.String,  # judge name (dafe, correctness, relevance, a DAFE judge's name)
        "role": pl.String,  # primary1 | primary2 | arbitrator | final | correctness | relevance
        "target": pl.String,  # answer_correct (binary human label) | passage_grade (0/1/2)
        "n": pl.Int64,  # labelled items the judge scored ("can't tell" and conflicts excluded)
        "accuracy": pl.Float64,
        "accuracy_lo": pl.Float64,
        "accuracy_hi": pl.Float64,
        "kappa": pl.Float64,
        "kappa_lo": pl.Float64,
        "kappa_hi": pl.Float64,
        "spearman": pl.Float64,  # graded score vs human label; null for a label-only judge
        "spearman_lo": pl.Float64,
        "spearman_hi": pl.Float64,
        "low_agreement": pl.Boolean,  # kappa < the warning threshold (default 0.4)
    },
    "calibration_ppi_systems": {
        "system": pl.String,
        "predictor": pl.String,  # dafe | correctness | <judge name> (a DAFE primary)
        "role": pl.String,  # final | correctness | primary1 | primary2
        **_PPI_ESTIMATE,
    },
    "calibration_ppi_pairs": {
        "system_a": pl.String,  # system_a < system_b
        "system_b": pl.String,
        "target": pl.String,  # accuracy_diff (acc_a − acc_b) | win_rate (DICE, of system_a)
        "predictor": pl.String,  # dafe | correctness | <judge name> | tournament
        "null_value": pl.Float64,  # no difference: 0 (accuracy_diff) or 0.5 (win_rate)
        **_PPI_ESTIMATE,
        "ppi_excludes_null": pl.Boolean,  # the PPI interval excludes null_value
        "judge_excludes_null": pl.Boolean,
    },
}
