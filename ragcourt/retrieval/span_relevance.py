"""Span-overlap relevance (spec §1): which chunks of any chunking answer a QA item.

A QA item's ground truth is a document span ``[span_start, span_end)``. A chunk of the same
document ``[chunk_start, chunk_end)`` is relevant when its character overlap
``o = max(0, min(chunk_end, span_end) - max(chunk_start, span_start))`` is positive and

    o >= min_span_coverage * (span_end - span_start)     (the chunk holds enough of the span)
    OR o >= min_chunk_coverage * (chunk_end - chunk_start)  (the chunk is mostly the span)

With the defaults (0.5, 0.5), every span inside a document that is covered by contiguous
chunks has at least one relevant chunk: either some chunk lies wholly inside the span, or the
span meets at most two chunks and one of them holds at least half of it. Qrels are binary
(relevance 1); chunks that are not relevant are simply absent.
"""

from __future__ import annotations

import polars as pl

from ragcourt.core.errors import RagcourtError
from ragcourt.retrieval.params import RelevanceRule


def overlap(chunk_start: int, chunk_end: int, span_start: int, span_end: int) -> int:
    """Characters shared by ``[chunk_start, chunk_end)`` and ``[span_start, span_end)``."""
    return max(0, min(chunk_end, span_end) - max(chunk_start, span_start))


def overlap_relevant(
    chunk_start: int, chunk_end: int, span_start: int, span_end: int, rule: RelevanceRule
) -> bool:
    """The rule in the module docstring for one (chunk, span) pair."""
    o = overlap(chunk_start, chunk_end, span_start, span_end)
    if o <= 0:
        return False
    holds_span = o >= rule.min_span_coverage * (span_end - span_start)
    mostly_span = o >= rule.min_chunk_coverage * (chunk_end - chunk_start)
    return holds_span or mostly_span


def qrels_from_spans(qa: pl.DataFrame, chunks: pl.DataFrame, rule: RelevanceRule) -> pl.DataFrame:
    """(query_id, chunk_id, relevance Int32 = 1) for every relevant (QA item, chunk) pair.

    ``qa`` needs question_id, doc_id, char_start, char_end; ``chunks`` the ``chunks`` columns.
    An empty or inverted span is an error naming the question.
    """
    bad = qa.filter(pl.col("char_end") <= pl.col("char_start"))
    if bad.height:
        r = bad.row(0, named=True)
        raise RagcourtError(
            f"QA item '{r['question_id']}': empty ground-truth span "
            f"[{r['char_start']}:{r['char_end']}]"
        )
    spans = qa.select(
        pl.col("question_id").alias("query_id"),
        "doc_id",
        pl.col("char_start").alias("span_start"),
        pl.col("char_end").alias("span_end"),
    )
    pairs = spans.join(
        chunks.select("chunk_id", "doc_id", "char_start", "char_end"), on="doc_id", how="inner"
    )
    o = pl.max_horizontal(
        pl.lit(0),
        pl.min_horizontal("char_end", "span_end") - pl.max_horizontal("char_start", "span_start"),
    )
    relevant = (o > 0) & (
        (o >= rule.min_span_coverage * (pl.col("span_end") - pl.col("span_start")))
        | (o >= rule.min_chunk_coverage * (pl.col("char_end") - pl.col("char_start")))
    )
    return (
        pairs.filter(relevant)
        .select("query_id", "chunk_id", pl.lit(1, dtype=pl.Int32).alias("relevance"))
        .unique(maintain_order=True)
        .sort("query_id", "chunk_id")
    )
