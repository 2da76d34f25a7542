"""The tables the embed and retrieval_eval stages write (:data:`ragcourt.core.schemas.TABLES`)."""

import polars as pl

from ragcourt.core.schemas import ARRAY_F32, Columns

TABLES: dict[str, Columns] = {
    "embeddings": {
        "chunk_id": pl.String,
        "embedding": ARRAY_F32,
    },
    "index_stats": {  # the dense index the embed stage built (ragcourt.retrieval.vector_index)
        "chunking": pl.String,
        "embedder": pl.String,
        "requested": pl.String,  # embedders.<e>.index as written ('auto' or a factory string)
        "factory": pl.String,  # the FAISS index_factory string built
        "metric": pl.String,
        "n_vectors": pl.Int64,
        "n_chunks": pl.Int64,
        "dim": pl.Int64,
        "build_s": pl.Float64,  # train + add, seconds
        "index_bytes": pl.Int64,
        "recall_at_10": pl.Float64,  # vs exact search on a seeded sample (1.0 for Flat)
        "recall_queries": pl.Int64,  # stored vectors used as queries (0: Flat, not measured)
        "ef_search": pl.Int64,
        "nprobe": pl.Int64,
        "seed": pl.Int64,
    },
    "retrieval_run": {
        "query_id": pl.String,
        "chunk_id": pl.String,
        "rank": pl.Int32,
        "score": pl.Float64,
        "retriever": pl.String,
    },
    "retrieval_per_query": {
        "chunking": pl.String,
        "embedder": pl.String,  # null for BM25 (embedder-independent)
        "retriever": pl.String,
        "query_id": pl.String,
        "measure": pl.String,  # ir-measures name, e.g. 'R@5', 'RR@10', 'nDCG@5'
        "value": pl.Float64,
    },
    "retrieval_summary": {
        "chunking": pl.String,
        "chunk_size": pl.Int64,
        "chunk_overlap": pl.Int64,
        "embedder": pl.String,
        "retriever": pl.String,
        "measure": pl.String,
        "metric": pl.String,  # measure name without the cutoff, e.g. 'R'
        "k": pl.Int64,
        "value": pl.Float64,  # mean over queries
        "std": pl.Float64,
        "n_queries": pl.Int64,  # questions in the mean (those with >= 1 relevant chunk)
        "n_unevaluable": pl.Int64,  # QA questions with no relevant chunk here: not in the mean
    },
}
