"""Each judge's agreement with the human labels (the ``agreement`` table of the ``calibrate``
stage): every DAFE judge in its role, the final verdict, correctness at
``correctness_threshold`` and passage relevance, with bootstrap intervals
(:mod:`ragcourt.calibration.agreement`), and a warning per judge whose kappa is low."""

from __future__ import annotations

from typing import Any

import polars as pl

from ragcourt.calibration.agreement import (
    agreement_frame,
    binary_judge_agreement,
    graded_agreement,
)
from ragcourt.calibration.params import CalibrationParams


def _role_rows(labeled: pl.DataFrame, bs: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per DAFE role over its valid verdicts (named by its most frequent judge)."""
    rows = []
    for role in ("primary1", "primary2", "arbitrator"):
        sub = labeled.filter(
            pl.col(f"{role}_verdict").is_not_null() & pl.col(f"{role}_error").is_null()
        )
        names = sub[f"{role}_judge"].drop_nulls()
        name = str(names.mode().sort()[0]) if names.len() else role
        score = sub[f"{role}_score"].to_list()
        rows.append(
            binary_judge_agreement(
                name,
                role,
                (sub["y"] == 1.0).to_list(),
                sub[f"{role}_verdict"].to_list(),
                score if any(s is not None for s in score) else None,
                **bs,
            )
        )
    return rows


def _relevance_row(
    passage_labels: pl.DataFrame, relevance: pl.DataFrame, bs: dict[str, Any]
) -> dict[str, Any]:
    """Graded agreement of the relevance judge with the passage labels."""
    pj = passage_labels.join(
        relevance.filter(pl.col("relevance").is_not_null()).select(
            "question_id", "chunk_id", "relevance"
        ),
        on=["question_id", "chunk_id"],
        how="inner",
    )
    return graded_agreement(
        "relevance",
        "relevance",
        pj["value"].cast(pl.Int64).to_list(),
        pj["relevance"].cast(pl.Int64).to_list(),
        **bs,
    )


def agreement_table(
    judged: pl.DataFrame,
    passage_labels: pl.DataFrame,
    relevance: pl.DataFrame | None,
    p: CalibrationParams,
) -> pl.DataFrame:
    """Agreement rows (n > 0) over the labelled rows of the judge table ``judged``."""
    bs: dict[str, Any] = {
        "n_resamples": p.bootstrap_resamples,
        "seed": p.seed,
        "alpha": p.alpha,
        "kappa_warning": p.kappa_warning,
    }
    labeled = judged.filter(pl.col("y").is_not_null())
    rows = _role_rows(labeled, bs)
    sub = labeled.filter(pl.col("final_verdict").is_not_null())
    rows.append(
        binary_judge_agreement(
            "dafe", "final", (sub["y"] == 1.0).to_list(), sub["final_verdict"].to_list(), **bs
        )
    )
    sub = labeled.filter(pl.col("correctness").is_not_null())
    rows.append(
        binary_judge_agreement(
            "correctness",
            "correctness",
            (sub["y"] == 1.0).to_list(),
            (sub["correctness"] >= p.correctness_threshold).to_list(),
            sub["correctness"].to_list(),
            **bs,
        )
    )
    if relevance is not None and passage_labels.height:
        rows.append(_relevance_row(passage_labels, relevance, bs))
    return agreement_frame([r for r in rows if r["n"] > 0])


def low_agreement(agreement: pl.DataFrame, kappa_warning: float) -> tuple[list[str], list[str]]:
    """The judges (``judge/role``) flagged for low agreement and one warning for each."""
    low: list[str] = []
    warnings: list[str] = []
    for r in agreement.filter(pl.col("low_agreement")).iter_rows(named=True):
        low.append(f"{r['judge']}/{r['role']}")
        warnings.append(
            f"low judge-human agreement: {r['judge']} ({r['role']}) has Cohen's kappa "
            f"{r['kappa']:.2f} with the human labels (n={r['n']}), below {kappa_warning}; "
            "its label-free scores are unreliable on this data, use the PPI estimates"
        )
    return low, warnings
