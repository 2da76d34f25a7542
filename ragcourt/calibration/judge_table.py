"""The per-answer judge table the calibration estimates read: each (system, question) with the
DAFE verdicts, the correctness score, the sampling stratum, one ``pred:<name>`` column per
predictor (:func:`predictors`) and, where labelled, the human ``y``."""

from __future__ import annotations

import polars as pl

Predictor = tuple[str, str, pl.Expr]  # (name, role, value expression over the judge table)


def predictors(verdicts: pl.DataFrame) -> list[Predictor]:
    """(name, role, value expression) of each per-answer predictor over the judge table:
    the final DAFE verdict, the correctness score and each primary judge's valid verdict
    (named by its most frequent judge; ``name:role`` when two share a name)."""
    out: list[Predictor] = [
        ("dafe", "final", pl.col("final_verdict").cast(pl.Float64)),
        ("correctness", "correctness", pl.col("correctness")),
    ]
    used = {"dafe", "correctness"}
    for role in ("primary1", "primary2"):
        names = verdicts[f"{role}_judge"].drop_nulls()
        name = str(names.mode().sort()[0]) if names.len() else role
        if name in used:
            name = f"{name}:{role}"
        used.add(name)
        expr = (
            pl.when(pl.col(f"{role}_error").is_null())
            .then(pl.col(f"{role}_verdict").cast(pl.Float64))
            .otherwise(None)
        )
        out.append((name, role, expr))
    return out


def judge_table(
    verdicts: pl.DataFrame, correctness: pl.DataFrame, strata: pl.DataFrame
) -> pl.DataFrame:
    """Verdicts of every role, the valid correctness score and the stratum ("unjudged" when
    the question has none) per (system, question)."""
    roles = ("primary1", "primary2", "arbitrator")
    cols = [f"{r}_{c}" for r in roles for c in ("judge", "verdict", "score", "error")]
    return (
        verdicts.select("system", "question_id", "final_verdict", *cols)
        .join(
            correctness.filter(pl.col("error").is_null()).select(
                "system", "question_id", "correctness"
            ),
            on=["system", "question_id"],
            how="left",
        )
        .join(strata, on="question_id", how="left")
        .with_columns(pl.col("stratum").fill_null("unjudged"))
    )


def labelled_judge_table(
    verdicts: pl.DataFrame,
    correctness: pl.DataFrame,
    strata: pl.DataFrame,
    preds: list[Predictor],
    answer_labels: pl.DataFrame,
) -> pl.DataFrame:
    """:func:`judge_table` with one ``pred:<name>`` column per predictor and the human ``y``
    (null where the answer is not labelled)."""
    jt = judge_table(verdicts, correctness, strata)
    jt = jt.with_columns([expr.alias(f"pred:{name}") for name, _, expr in preds])
    return jt.join(answer_labels, on=["system", "question_id"], how="left")
