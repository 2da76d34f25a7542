"""Retrieval once per group of systems that rank alike (SPEC 3).

Systems are grouped by :class:`~ragcourt.answering.retrieval_key.RetrievalKey`
(chunking, embedder, retriever, depth, RAG-Fusion config); each group ranks every question once
to ``depth = max(retrieval.depth, top_k)`` and every system keeps its first ``top_k`` passages.
Dense and BM25 rankings are prefix-consistent, so this equals retrieving ``top_k`` alone;
hybrid and RAG-Fusion fuse component rankings taken to ``depth`` and then cut to ``top_k``
(fuse deep lists, then cut), so a system's passages never depend on which other systems share
its group. ``seconds_per_query`` = the group's retrieval wall time / #questions.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from ragcourt.answering.params import AnsweringView
from ragcourt.answering.partitions import chunks_path
from ragcourt.answering.protocols import Chatter, Retriever, RetrieverFactory
from ragcourt.answering.rag_fusion import Variants, fused_search, generate_variants
from ragcourt.answering.retrieval_key import RetrievalKey
from ragcourt.core.errors import RagcourtError
from ragcourt.core.io import read_table

HIT_COLS = ["chunk_id", "rank", "score", "doc_id", "char_start", "char_end", "text"]


@dataclass
class GroupRetrieval:
    """A group's ranking at ``key.depth`` with passage data, plus its RAG-Fusion variants."""

    key: RetrievalKey
    hits: pl.DataFrame  # query_id + HIT_COLS, sorted by query_id, rank
    variants: Variants | None
    seconds_per_query: float
    errors: dict[str, str] = field(default_factory=dict)  # question -> why it has no passages


def _questions(qa: pl.DataFrame) -> pl.DataFrame:
    return qa.select(pl.col("question_id").alias("query_id"), pl.col("question").alias("query"))


def attach_passages(run: pl.DataFrame, chunks: pl.DataFrame, source: Path) -> pl.DataFrame:
    """Join a retrieval run with chunk text and offsets; a chunk id missing from ``chunks``
    means index and chunks are out of sync (error naming the chunks file)."""
    hits = run.select("query_id", "chunk_id", "rank", "score").join(
        chunks.select("chunk_id", "doc_id", "char_start", "char_end", "text"),
        on="chunk_id",
        how="left",
    )
    missing = hits.filter(pl.col("doc_id").is_null())
    if missing.height:
        raise RagcourtError(
            f"{source}: retrieved chunk '{missing['chunk_id'][0]}' is not in the chunks table "
            "(index and chunks out of sync: re-run the index stage)"
        )
    return hits.with_columns(pl.col("rank").cast(pl.Int32), pl.col("score").cast(pl.Float64)).sort(
        "query_id", "rank"
    )


def retrieve_group(
    key: RetrievalKey,
    qa: pl.DataFrame,
    params: AnsweringView,
    retriever: Retriever,
    gateway: Chatter,
    prompts_dir: Path | None = None,
) -> GroupRetrieval:
    """Rank every question once for this retrieval key (RAG-Fusion: variants, then RRF)."""
    queries = _questions(qa)
    variants: Variants | None = None
    if key.fusion_variants:
        assert key.fusion_model is not None and key.fusion_prompt_version is not None
        variants = generate_variants(
            gateway,
            queries,
            key.fusion_variants,
            key.fusion_model,
            params.llm,
            prompt_version=key.fusion_prompt_version,
            max_tokens=key.fusion_max_tokens or 128,
            prompts_dir=prompts_dir,
        )
    t0 = time.perf_counter()
    if variants is not None:
        ok = queries.filter(~pl.col("query_id").is_in(list(variants.errors)))
        per_q = {q: variants.queries[q] for q in ok["query_id"].to_list()}
        run = fused_search(retriever, ok, per_q, key.depth, params.retrieval.rrf_k)
    else:
        run = retriever.search(queries, key.depth)
    src = chunks_path(key.chunking)
    hits = attach_passages(run, read_table(src, "chunks"), src)
    elapsed = time.perf_counter() - t0
    return GroupRetrieval(key, hits, variants, elapsed / max(qa.height, 1))


def default_retriever_factory() -> RetrieverFactory:
    """``ragcourt.retrieval.retrieve.open_retriever`` (imported only when needed)."""
    from ragcourt.retrieval.retrieve import open_retriever

    return open_retriever
