"""Span-rule IR metrics per (system, question) for the judge summary (spec §5, 7).

nDCG / RR / Recall / Precision at ``k`` use the qrels of the chunking each system retrieved
from (:mod:`ragcourt.retrieval.span_relevance`, scored by :mod:`ragcourt.retrieval.ir_metrics`).
"""

from __future__ import annotations

import logging
from typing import Any

import polars as pl

from ragcourt.core import catalog
from ragcourt.core.io import read_table
from ragcourt.core.provenance import is_external
from ragcourt.judging.params import JudgingView
from ragcourt.judging.relevance import retrieved_passages

log = logging.getLogger("ragcourt.judge")

SPAN_MEASURES = {"ndcg": "nDCG", "rr": "RR", "recall": "R", "precision": "P"}  # ir-measures


def _chunks_by_chunking(params: JudgingView, needed: set[str]) -> dict[str, pl.DataFrame]:
    out: dict[str, pl.DataFrame] = {}
    for name in params.chunkings:
        path = catalog.path("chunks", chunking=name)
        if path.is_file():
            out[name] = read_table(path, "chunks")
    missing = needed - {c for df in out.values() for c in df["chunk_id"].to_list()}
    if missing:
        log.warning("judge: %d retrieved chunk ids are in no chunks file", len(missing))
    return out


def span_metrics(
    answers: pl.DataFrame, qa: pl.DataFrame, params: JudgingView, k: int
) -> pl.DataFrame:
    """Per (system, question_id): ndcg/rr/recall/precision at ``k`` from the span rule on
    the chunking each system retrieved from. Empty frame when no chunks file exists;
    questions whose span maps to no chunk of that chunking stay null."""
    from ragcourt.retrieval.ir_metrics import evaluate
    from ragcourt.retrieval.span_relevance import qrels_from_spans

    cols: dict[str, pl.DataType] = {"system": pl.String(), "question_id": pl.String()} | {
        f"{m}_at_k": pl.Float64() for m in SPAN_MEASURES
    }
    # external systems' contexts (``ext:`` ids) are in no chunks file: their span metrics stay null
    passages = retrieved_passages(answers.filter(~is_external()), k)
    chunks = _chunks_by_chunking(params, set(passages["chunk_id"].to_list()))
    if not chunks or passages.is_empty():
        return pl.DataFrame(schema=cols)
    chunk_map = pl.concat(
        [df.select("chunk_id", pl.lit(name).alias("chunking")) for name, df in chunks.items()]
    )
    frames: list[pl.DataFrame] = []
    for (system,), sys_rows in passages.join(chunk_map, on="chunk_id", how="left").group_by(
        "system", maintain_order=True
    ):
        used = sys_rows["chunking"].drop_nulls().unique().to_list()
        if len(used) != 1:
            log.warning(
                "judge: system %s retrieved from chunkings %s; no span metrics", system, used
            )
            continue
        qrels = qrels_from_spans(qa, chunks[used[0]], params.retrieval.relevance)
        run = sys_rows.select(
            pl.col("question_id").alias("query_id"),
            "chunk_id",
            pl.col("rank").cast(pl.Int32),
            (-pl.col("rank").cast(pl.Float64)).alias("score"),
            pl.lit(system).alias("retriever"),
        )
        per = evaluate(run, qrels, [k])
        judged = qrels.filter(pl.col("relevance") > 0)["query_id"].unique()
        wide: dict[str, list[Any]] = {"question_id": judged.to_list()}
        for col, family in SPAN_MEASURES.items():
            vals = dict(
                per.filter(pl.col("measure") == f"{family}@{k}")
                .select("query_id", "value")
                .iter_rows()
            )
            wide[f"{col}_at_k"] = [float(vals.get(q, 0.0)) for q in wide["question_id"]]
        frames.append(pl.DataFrame(wide).with_columns(pl.lit(system).alias("system")))
    if not frames:
        return pl.DataFrame(schema=cols)
    return pl.concat(frames, how="diagonal").select(list(cols)).cast(pl.Schema(cols))
