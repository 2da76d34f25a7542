"""Judge analytics (spec §5, 7): every per-(system, question) measure side by side, the
per-system summary, and the rank correlation of each retrieval metric with end-to-end
correctness over (system, question) pairs.

Outcome (UDCG's three levels): 2 = judged correct, 1 = abstained (and not judged correct),
0 = judged incorrect, null without a final verdict. Correlations: Spearman (with SE) and
Kendall τ-b of each metric in :data:`CORRELATED` with each target in :data:`TARGETS`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import polars as pl

from ragcourt.core.provenance import NO_CONTEXTS_SUPPLIED
from ragcourt.core.schemas import TABLES
from ragcourt.judging.agreement import rank_correlation
from ragcourt.judging.params import JudgingView
from ragcourt.judging.relevance import mrr_per_question, retrieved_passages
from ragcourt.judging.span_metrics import SPAN_MEASURES
from ragcourt.judging.summaries import ThetaFitReport, ThetaNotFitted
from ragcourt.judging.udcg import fit_udcg_theta

if TYPE_CHECKING:
    from polars._typing import SchemaDict

MRR_K = 5  # RAGElo reports MRR@5
CORRELATED = (
    "udcg",
    "udcg_theta",
    f"rr1_at{MRR_K}",
    f"rr2_at{MRR_K}",
    *(f"{m}_at_k" for m in SPAN_MEASURES),
)
TARGETS = ("correctness", "final_verdict", "outcome")


def per_question_table(
    answers: pl.DataFrame,
    verdicts: pl.DataFrame,
    correctness: pl.DataFrame,
    relevance: pl.DataFrame,
    udcg: pl.DataFrame,
    span: pl.DataFrame,
    params: JudgingView,
) -> tuple[pl.DataFrame, ThetaFitReport | ThetaNotFitted]:
    """Every per-(system, question) measure side by side, plus the UDCGθ fit report."""
    keys = ["system", "question_id"]
    mrr = mrr_per_question(retrieved_passages(answers), relevance, MRR_K, (1, 2))
    t = (
        answers.select(*keys, "abstained")
        .join(verdicts.select(*keys, "final_verdict"), on=keys, how="left")
        .join(correctness.select(*keys, "correctness"), on=keys, how="left")
        .join(udcg.select(*keys, "udcg", "utilities"), on=keys, how="left")
        .join(
            mrr.select(
                *keys,
                f"rr1_at{MRR_K}",
                f"rr2_at{MRR_K}",
                pl.col("unjudged").alias("relevance_unjudged"),
            ),
            on=keys,
            how="left",
        )
        .join(span, on=keys, how="left")
    )
    theta_report: ThetaFitReport | ThetaNotFitted = ThetaNotFitted(fitted=False)
    theta_scores: list[float | None] = [None] * t.height
    up = params.judge.udcg
    if up.fit_theta:
        utilities = [
            u if s is not None else None
            for u, s in zip(t["utilities"].to_list(), t["udcg"].to_list(), strict=True)
        ]
        fit = fit_udcg_theta(
            utilities,
            t["correctness"].to_list(),
            t["question_id"].to_list(),
            up.k,
            up.theta_min_pairs,
            seed=params.llm.seed,
        )
        theta_report = ThetaFitReport(
            fitted=fit.scores is not None,
            k=fit.k,
            pairs=fit.n_pairs,
            alpha=fit.alpha,
            beta=fit.beta,
            reason=fit.reason,
            target="correctness",
            scores="out-of-fold (GroupKFold by question)",
        )
        if fit.scores is not None:
            theta_scores = fit.scores
    t = t.drop("utilities").with_columns(
        pl.Series("udcg_theta", theta_scores, dtype=pl.Float64),
        outcome_expr().alias("outcome"),
    )
    return t.select(list(TABLES["judge_per_question"])), theta_report


def outcome_expr() -> pl.Expr:
    """UDCG's three-level end-to-end outcome from ``final_verdict`` and ``abstained``:
    2 = judged correct, 1 = abstained (and not judged correct), 0 = judged incorrect.
    A row without a final verdict (answer or judge error) is null, also when it abstained,
    so error rows never enter the correlations."""
    verdict = pl.col("final_verdict")
    return (
        pl.when(verdict.is_null())
        .then(None)
        .when(verdict)
        .then(2)
        .when(pl.col("abstained"))
        .then(1)
        .otherwise(0)
        .cast(pl.Int8)
    )


def metric_label(metric: str, k: int) -> str:
    """Human label of a per_question metric column."""
    labels = {
        "udcg": f"UDCG (k<={k})",
        "udcg_theta": f"UDCGθ (k<={k}, out-of-fold)",
        f"rr1_at{MRR_K}": f"MRR@{MRR_K}, LLM relevance >= 1",
        f"rr2_at{MRR_K}": f"MRR@{MRR_K}, LLM relevance >= 2",
        "ndcg_at_k": f"nDCG@{k}, span rule",
        "rr_at_k": f"MRR@{k}, span rule",
        "recall_at_k": f"Recall@{k}, span rule",
        "precision_at_k": f"Precision@{k}, span rule",
    }
    return labels.get(metric, metric)


def metric_correlation(per_q: pl.DataFrame, k: int) -> pl.DataFrame:
    """Spearman (with SE) and Kendall τ-b of each retrieval metric with each end-to-end
    target over the (system, question) pairs where both are known (``n``)."""
    rows = []
    for metric in CORRELATED:
        for target in TARGETS:
            x = per_q[metric].cast(pl.Float64).to_list()
            y = per_q[target].cast(pl.Float64).to_list()
            stats = rank_correlation([_nan(v) for v in x], [_nan(v) for v in y])
            rows.append(
                {"metric": metric, "label": metric_label(metric, k), "target": target} | stats
            )
    schema = cast("SchemaDict", TABLES["metric_correlation"])
    return pl.DataFrame(rows, schema=schema, orient="row")


def _nan(v: float | None) -> float:
    return float("nan") if v is None else float(v)


def system_summary(
    per_q: pl.DataFrame, verdicts: pl.DataFrame, correctness: pl.DataFrame, udcg: pl.DataFrame
) -> pl.DataFrame:
    """Per system: accuracy (final verdicts), correctness mean, MRR@5 at both thresholds,
    UDCG mean, span IR metrics, and the error counts behind each."""
    err = (
        verdicts.group_by("system")
        .agg(
            pl.col("final_verdict").is_null().sum().cast(pl.Int64).alias("verdict_errors"),
            pl.col("arbitrator_called").sum().cast(pl.Int64).alias("arbitrator_calls"),
        )
        .join(
            correctness.group_by("system").agg(
                pl.col("correctness").is_null().sum().cast(pl.Int64).alias("correctness_errors")
            ),
            on="system",
            how="full",
            coalesce=True,
        )
        .join(
            udcg.group_by("system").agg(  # an external system without contexts is no error
                (
                    pl.col("udcg").is_null()
                    & (pl.col("error") != NO_CONTEXTS_SUPPLIED).fill_null(True)
                )
                .sum()
                .cast(pl.Int64)
                .alias("udcg_errors")
            ),
            on="system",
            how="full",
            coalesce=True,
        )
    )
    agg = per_q.group_by("system", maintain_order=True).agg(
        pl.len().cast(pl.Int64).alias("n_questions"),
        pl.col("final_verdict").drop_nulls().len().cast(pl.Int64).alias("n_verdicts"),
        pl.col("final_verdict").cast(pl.Float64).mean().alias("accuracy"),
        pl.col("correctness").mean().alias("correctness_mean"),
        pl.col("abstained").cast(pl.Float64).mean().alias("abstention_rate"),
        pl.col(f"rr1_at{MRR_K}").mean().alias(f"mrr1_at{MRR_K}"),
        pl.col(f"rr2_at{MRR_K}").mean().alias(f"mrr2_at{MRR_K}"),
        pl.col("relevance_unjudged").sum().cast(pl.Int64).alias("relevance_unjudged"),
        pl.col("udcg").mean().alias("udcg_mean"),
        *(pl.col(f"{m}_at_k").mean() for m in SPAN_MEASURES),
    )
    return agg.join(err, on="system", how="left").select(list(TABLES["system_summary"]))
