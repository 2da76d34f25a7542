"""Retrieval evaluation on the QA set (spec §1, 5): Recall/MRR/nDCG/Precision/Hits@k.

For every (chunking, embedder, retriever) of params - BM25 does not use an embedder, so it is
evaluated once per chunking with ``embedder`` null (``-`` in metrics.json) - every QA question
is retrieved with :func:`ragcourt.retrieval.retrieve.open_retriever` to depth ``max(retrieval.depth,
max(ks))``. A chunk is relevant when it overlaps the item's ground-truth document span under
``retrieval.relevance`` (:func:`ragcourt.retrieval.span_relevance.qrels_from_spans`), which is what
makes systems that chunk differently comparable. Per-query values come from
:func:`ragcourt.retrieval.ir_metrics.evaluate` (ir-measures); the summary is their mean (and std)
over the questions. Outputs: per_query.parquet, summary.parquet, metrics.json,
recall_vs_chunk_size.png.

Bias across chunk sizes: a generated question's ground-truth span is a whole chunk of
``qagen.reference_chunking`` (c512 in the demo). Under the 50% rule a smaller chunking has
several relevant chunks per question (about 2 for c256 with c512 spans), so Recall@k is at
most min(k, n_rel) / n_rel - Recall@1 is capped near 0.5 - and Precision@k is inflated,
while a chunking at least as large as the reference has about one relevant chunk. Recall and
Precision therefore favour or penalise chunk sizes by construction; to compare chunk sizes
use MRR@k (RR) and Hits@k (Success), which need only one relevant chunk in the top k.

A question with no relevant chunk under a chunking (e.g. its document is not in that
chunking, or no chunk overlaps its span enough) cannot be scored there: it is left out of
that chunking's per-query rows and means (``n_queries``), logged as a warning, and counted
in ``n_unevaluable`` of the summary and metrics.json, never dropped silently. A config with
no evaluable question at all keeps summary rows with a null value.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl

from ragcourt.core import catalog
from ragcourt.core.errors import RagcourtError
from ragcourt.core.io import read_table, write_json, write_parquet, write_with
from ragcourt.core.schemas import TABLES, frame_schema
from ragcourt.retrieval.params import RetrievalView

log = logging.getLogger("ragcourt.retrieval_eval")

QA_PATH = catalog.path("qa")
PER_QUERY_PATH = catalog.path("retrieval_per_query")
SUMMARY_PATH = catalog.path("retrieval_summary")
METRICS_PATH = catalog.path("retrieval_metrics")
PLOT_PATH = catalog.path("retrieval_plot")

NO_EMBEDDER = "-"  # label of embedder-independent retrievers (BM25) in metrics.json and plots
_MEASURE = re.compile(r"^(?P<metric>.+?)@(?P<k>\d+)$")


def evaluation_grid(params: RetrievalView) -> Iterator[tuple[str, str | None, str]]:
    """(chunking, embedder or None, retriever) triples; a retriever that reads no embedder
    (BM25) once per chunking. An unregistered kind is a one-line ConfigError."""
    from ragcourt.retrieval.retrieve import RETRIEVERS, retriever_settings

    kinds = [
        (r, RETRIEVERS.get(r, f"retrieval.retrievers[{i}]"))
        for i, r in enumerate(params.retrieval.retrievers)
    ]
    for r, _ in kinds:  # a bad setting fails before any retrieval
        retriever_settings(r, params)
    for chunking in params.chunkings:
        for retriever, kind in kinds:
            if not kind.embedder:
                yield chunking, None, retriever
            else:
                for embedder in params.embedders:
                    yield chunking, embedder, retriever


def search_depth(params: RetrievalView) -> int:
    return max(params.retrieval.depth, *params.retrieval.ks)


UNEVALUABLE_SCHEMA = {
    "chunking": pl.String,
    "embedder": pl.String,
    "retriever": pl.String,
    "n_unevaluable": pl.Int64,
}


def evaluate_config(
    qa: pl.DataFrame,
    chunks: pl.DataFrame,
    run: pl.DataFrame,
    params: RetrievalView,
) -> tuple[pl.DataFrame, list[str]]:
    """Per-query measures (query_id, measure, value) of one retrieval ``run`` over ``qa``, and
    the ids of the questions that cannot be scored under this chunking.

    Every question with at least one relevant chunk under this chunking gets every measure (a
    question the retriever returned nothing for scores 0: see
    :mod:`ragcourt.retrieval.ir_metrics`); one with none is unevaluable (its metrics are
    undefined) and returned in the list instead.
    """
    from ragcourt.retrieval.ir_metrics import evaluate
    from ragcourt.retrieval.span_relevance import qrels_from_spans

    qrels = qrels_from_spans(qa, chunks, params.retrieval.relevance)
    judged = set(qrels.filter(pl.col("relevance") > 0)["query_id"].to_list())
    unevaluable = [q for q in qa["question_id"].to_list() if q not in judged]
    return evaluate(run, qrels, params.retrieval.ks), unevaluable


def evaluate_all(qa: pl.DataFrame, params: RetrievalView) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Per-query rows (table ``retrieval_per_query``) for the whole grid of params, and the
    count of unevaluable questions per config (:data:`UNEVALUABLE_SCHEMA`)."""
    from ragcourt.retrieval.retrieve import open_retriever

    queries = qa.select(pl.col("question_id").alias("query_id"), pl.col("question").alias("query"))
    depth = search_depth(params)
    frames: list[pl.DataFrame] = []
    counts: list[tuple[str, str | None, str, int]] = []
    warned: set[str] = set()
    chunk_cache: dict[str, pl.DataFrame] = {}
    for chunking, embedder, kind in evaluation_grid(params):
        if chunking not in chunk_cache:
            chunk_cache[chunking] = read_table(catalog.path("chunks", chunking=chunking), "chunks")
        retriever = open_retriever(kind, chunking, embedder, params)
        run = retriever.search(queries, depth)
        per, unevaluable = evaluate_config(qa, chunk_cache[chunking], run, params)
        counts.append((chunking, embedder, kind, len(unevaluable)))
        if unevaluable and chunking not in warned:
            warned.add(chunking)
            log.warning(
                "retrieval_eval: %d of %d questions have no relevant chunk under chunking %s "
                "and are left out of its metrics (n_unevaluable), e.g. %s",
                len(unevaluable),
                qa.height,
                chunking,
                ", ".join(unevaluable[:5]),
            )
        frames.append(
            per.select(
                pl.lit(chunking).alias("chunking"),
                pl.lit(embedder, dtype=pl.String).alias("embedder"),
                pl.lit(kind).alias("retriever"),
                "query_id",
                "measure",
                "value",
            )
        )
        log.info("retrieval_eval: %s/%s/%s done", chunking, embedder or NO_EMBEDDER, kind)
    unevaluable_counts = pl.DataFrame(counts, schema=UNEVALUABLE_SCHEMA, orient="row")
    if not frames:
        return pl.DataFrame(schema=frame_schema("retrieval_per_query")), unevaluable_counts
    return pl.concat(frames), unevaluable_counts


def summarize(
    per_query: pl.DataFrame, params: RetrievalView, unevaluable: pl.DataFrame | None = None
) -> pl.DataFrame:
    """Mean and std over the evaluable questions per (chunking, embedder, retriever, measure),
    with ``n_queries`` (questions in the mean) and ``n_unevaluable`` (from ``unevaluable``,
    :data:`UNEVALUABLE_SCHEMA`; 0 when not given). A config of ``unevaluable`` with no
    per-query rows gets one row per measure with a null value and ``n_queries`` 0."""
    from ragcourt.retrieval.ir_metrics import measures_for

    sizes = pl.DataFrame(
        {
            "chunking": list(params.chunkings),
            "chunk_size": [c.size for c in params.chunkings.values()],
            "chunk_overlap": [c.overlap for c in params.chunkings.values()],
        },
        schema={"chunking": pl.String, "chunk_size": pl.Int64, "chunk_overlap": pl.Int64},
    )
    keys = ["chunking", "embedder", "retriever", "measure"]
    agg = per_query.group_by(keys).agg(
        pl.col("value").mean().alias("value"),
        pl.col("value").std().alias("std"),
        pl.len().cast(pl.Int64).alias("n_queries"),
    )
    if unevaluable is not None and unevaluable.height:
        measures = pl.DataFrame({"measure": [str(m) for m in measures_for(params.retrieval.ks)]})
        missing = (
            unevaluable.select("chunking", "embedder", "retriever")
            .join(agg, on=["chunking", "embedder", "retriever"], how="anti", nulls_equal=True)
            .join(measures, how="cross")
            .with_columns(
                pl.lit(None, dtype=pl.Float64).alias("value"),
                pl.lit(None, dtype=pl.Float64).alias("std"),
                pl.lit(0, dtype=pl.Int64).alias("n_queries"),
            )
        )
        agg = pl.concat([agg, missing.select(agg.columns)]).join(
            unevaluable, on=["chunking", "embedder", "retriever"], how="left", nulls_equal=True
        )
    else:
        agg = agg.with_columns(pl.lit(None, dtype=pl.Int64).alias("n_unevaluable"))
    agg = agg.with_columns(pl.col("n_unevaluable").fill_null(0))
    parsed = agg["measure"].map_elements(_split_measure, return_dtype=pl.Struct(
        {"metric": pl.String, "k": pl.Int64}))  # fmt: skip
    out = (
        agg.with_columns(parsed.alias("_m"))
        .unnest("_m")
        .join(sizes, on="chunking", how="left")
        .sort(["chunk_size", "chunking", "embedder", "retriever", "metric", "k"], nulls_last=True)
    )
    return out.select(list(TABLES["retrieval_summary"]))


def _split_measure(measure: str) -> dict[str, Any]:
    m = _MEASURE.match(measure)
    if m is None:
        return {"metric": measure, "k": None}
    return {"metric": m["metric"], "k": int(m["k"])}


def metrics_json(summary: pl.DataFrame) -> dict[str, Any]:
    """Nested {chunking: {embedder or '-': {retriever: {measure: mean, ...,
    'n_unevaluable': count}}}} for DVC metrics (a mean over no question is null)."""
    out: dict[str, Any] = {}
    for r in summary.iter_rows(named=True):
        emb = r["embedder"] or NO_EMBEDDER
        node = out.setdefault(r["chunking"], {}).setdefault(emb, {}).setdefault(r["retriever"], {})
        node[r["measure"]] = None if r["value"] is None else round(float(r["value"]), 6)
        node["n_unevaluable"] = int(r["n_unevaluable"])
    return out


def recall_metric(summary: pl.DataFrame) -> str:
    """The recall family's name in ``summary`` ('R' in ir-measures, 'Recall' elsewhere)."""
    for name in ("R", "Recall", "recall"):
        if summary.filter(pl.col("metric") == name).height:
            return name
    raise RagcourtError("retrieval summary holds no recall measure (R@k / Recall@k)")


def plot_recall(summary: pl.DataFrame, path: Path) -> None:
    """Recall@k against chunk size, one panel per k, one line per (retriever, embedder)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    recall = summary.filter(pl.col("metric") == recall_metric(summary)).sort("chunk_size")
    ks = sorted(recall["k"].drop_nulls().unique().to_list())
    fig, axes = plt.subplots(1, len(ks), figsize=(3.6 * len(ks), 3.4), sharey=True, squeeze=False)
    for ax, k in zip(axes[0], ks, strict=True):
        sub = recall.filter(pl.col("k") == k)
        for (emb, ret), line in sub.group_by(["embedder", "retriever"], maintain_order=True):
            label = ret if emb is None else f"{ret} / {emb}"
            line = line.sort("chunk_size")
            ax.plot(line["chunk_size"], line["value"], marker="o", label=label)
        ax.set_title(f"Recall@{k}")
        ax.set_xlabel("chunk size (tokens)")
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("mean over questions")
    axes[0][-1].legend(fontsize=7, loc="lower right")
    most = recall["n_queries"].max()  # Int64 column: an int, or None when empty
    n = most if isinstance(most, int) else 0
    fig.suptitle(f"Retrieval recall vs chunk size ({n} questions)", fontsize=10)
    fig.tight_layout()
    write_with(path, lambda tmp: fig.savefig(tmp, dpi=110, format="png"))
    plt.close(fig)


def run(params: RetrievalView) -> None:
    """Whole stage, paths relative to the cwd."""
    qa = read_table(QA_PATH, "qa")
    if qa.is_empty():
        raise RagcourtError(f"{QA_PATH}: no QA items to evaluate retrieval on")
    per_query, unevaluable = evaluate_all(qa, params)
    summary = summarize(per_query, params, unevaluable)
    write_parquet(per_query, PER_QUERY_PATH, "retrieval_per_query")
    write_parquet(summary, SUMMARY_PATH, "retrieval_summary")
    write_json(metrics_json(summary), METRICS_PATH)
    plot_recall(summary, PLOT_PATH)
