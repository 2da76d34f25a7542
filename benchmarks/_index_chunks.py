"""``index_scale --source chunks``: flat against approximate indexes on real speech chunks.

The chunks are the speeches' c256 chunks made by the project's own ingest and chunk stages
(:mod:`benchmarks._sotu`), or a given ``chunks`` table; the first ``--max-chunks`` are embedded
by the pipeline's :func:`ragcourt.retrieval.long_chunks.embed_chunks` (windows), cached under
``--cache``. Queries: the first sentence (at most 30 words) of ``--queries`` chunks drawn with
``--seed``, each query's one relevant item the chunk it came from. Per index: recall@10 of its
top 10 chunks against the flat index's, and MRR@10, nDCG@10 and Hits@10 of the relevant chunk.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np


def speech_chunks(args: argparse.Namespace) -> Any:
    """The chunks table: ``--chunks``, else the speeches ingested and chunked at c256."""
    import polars as pl

    from benchmarks._common import working_dir
    from benchmarks._sotu import sotu_project
    from ragcourt.core.offline import apply
    from ragcourt.corpus import chunking, ingest
    from ragcourt.orchestration.params import load_params

    apply()  # offline environment (the chunk tokenizer's copy)
    if args.chunks:
        return pl.read_parquet(args.chunks)
    cached = Path(args.cache) / "sotu_c256_chunks.parquet"
    if not cached.is_file():
        work = sotu_project("bench_index_chunks_", 1, None, {})
        try:
            with working_dir(work):
                params = load_params("params.yaml")
                ingest.run(params)
                chunking.run(params, "c256")
            Path(args.cache).mkdir(parents=True, exist_ok=True)
            shutil.copy(work / "data/chunks/c256.parquet", cached)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return pl.read_parquet(cached)


def first_sentence(text: str) -> str:
    words = re.split(r"(?<=[.!?])\s", text.strip(), maxsplit=1)[0].split()
    return " ".join(words[:30])


def ranking(labels: list[list[tuple[int, float]]], relevant: list[int]) -> dict[str, float]:
    """MRR@10, nDCG@10 (one relevant item: 1 / log2(rank + 1)) and Hits@10."""
    mrr, ndcg, hits = [], [], []
    for hit_list, rel in zip(labels, relevant, strict=True):
        ranks = [r for r, (lab, _) in enumerate(hit_list[:10], 1) if lab == rel]
        mrr.append(1 / ranks[0] if ranks else 0.0)
        ndcg.append(1 / math.log2(ranks[0] + 1) if ranks else 0.0)
        hits.append(1.0 if ranks else 0.0)
    return {
        "mrr_at_10": round(float(np.mean(mrr)), 4),
        "ndcg_at_10": round(float(np.mean(ndcg)), 4),
        "hits_at_10": round(float(np.mean(hits)), 4),
    }


def run_chunks(args: argparse.Namespace) -> None:
    from ragcourt.retrieval.embedders import encode
    from ragcourt.retrieval.long_chunks import best_per_chunk, embed_chunks
    from ragcourt.retrieval.params import EmbedderSpec
    from ragcourt.retrieval.vector_index import configure_search

    chunks = speech_chunks(args).head(args.max_chunks)
    texts = chunks["text"].to_list()
    cache = Path(args.cache) / f"sotu_c256_{len(texts)}_{args.embedder}.npz"
    if cache.is_file():
        data = np.load(cache)
        vecs, owners = data["vecs"], data["owners"]
    else:
        t0 = time.perf_counter()
        cv = embed_chunks(args.embedder, texts, "windows", 32, 64)
        vecs, owners = cv.vectors, cv.owners
        np.savez(cache, vecs=vecs, owners=owners)
        print(
            f"embedded {len(texts)} chunks ({len(vecs)} vectors) "
            f"in {time.perf_counter() - t0:.0f} s"
        )
    rng = np.random.default_rng(args.seed)
    picked = sorted(rng.choice(len(texts), size=min(args.queries, len(texts)), replace=False))
    qvecs = encode(args.embedder, [first_sentence(texts[i]) for i in picked], 64, role="query")
    depth = 10 * int(np.bincount(owners).max())
    results = []
    for factory in ["Flat", *(args.factory or ["HNSW32"])]:
        index, build_s = _build_labelled(factory, vecs, owners, args.seed)
        spec = EmbedderSpec(model="x", ef_search=args.ef_search[0], nprobe=args.nprobe[0])
        configure_search(index, spec)
        t0 = time.perf_counter()
        scores, labels = index.search(qvecs, depth)
        qps = len(qvecs) / (time.perf_counter() - t0)
        top = best_per_chunk(labels, scores, 10)
        row: dict[str, Any] = {"factory": factory, "build_s": round(build_s, 2), "qps": round(qps)}
        row.update(ranking(top, [int(i) for i in picked]))
        results.append((row, top))
        if factory != "Flat":
            flat = results[0][1]
            row["recall_at_10_vs_flat"] = round(
                float(
                    np.mean(
                        [
                            len({a for a, _ in x} & {b for b, _ in y}) / len(y)
                            for x, y in zip(top, flat, strict=True)
                        ]
                    )
                ),
                4,
            )
            row["ef_search"], row["nprobe"] = spec.ef_search, spec.nprobe
        print(json.dumps(row), flush=True)


def _build_labelled(
    factory: str, vecs: np.ndarray, owners: np.ndarray, seed: int
) -> tuple[Any, float]:
    """The pipeline's index over ``vecs`` with chunk-ordinal labels ``owners``."""
    from ragcourt.retrieval.vector_index import TRAIN_SAMPLE, has_hnsw, new_index, one_thread_if

    t0 = time.perf_counter()
    index = new_index(factory, vecs.shape[1], "--factory")
    if not index.is_trained:
        rng = np.random.default_rng(seed)
        pos = np.sort(rng.choice(len(vecs), size=min(len(vecs), TRAIN_SAMPLE), replace=False))
        index.train(np.ascontiguousarray(vecs[pos]))
    with one_thread_if(has_hnsw(index)):
        index.add_with_ids(np.ascontiguousarray(vecs), owners.astype(np.int64))
    return index, time.perf_counter() - t0
