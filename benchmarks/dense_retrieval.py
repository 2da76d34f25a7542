"""Benchmark dense retrieval over the full State of the Union corpus (233 addresses, c256).

Runs the real ingest and chunk stages on ../shared/corpora/sotu at 256 tokens (overlap 32),
embeds the chunks with MiniLM (cached under ~/.cache/ragcourt/bench keyed by the chunk texts,
since embedding ~10k chunks on 2 CPU cores takes minutes and is not what is measured here),
then reports:

* index build time (FAISS IndexFlatIP over the normalised vectors),
* query time for 1,000 queries through ``ragcourt.retrieval.retrieve`` (embedding + search) and
search only,
* recall@10 of FAISS against exact numpy top-10 (argsort of Q @ X^T); must be 1.0 for a flat
  index. A mismatch that is an exact score tie at rank 10 is reported separately.

Queries are 12-word windows of 1,000 randomly chosen chunks (seed 0).

    python -m benchmarks dense_retrieval
    python -m benchmarks dense_retrieval --queries 200 --embedder minilm
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import shutil
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from benchmarks._common import SHARED, project_copy, working_dir, write_params

SOTU = SHARED / "corpora" / "sotu"
CACHE = Path.home() / ".cache" / "ragcourt" / "bench"


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=str(SOTU))
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--embedder", default="minilm")
    ap.add_argument("--k", type=int, default=10)
    args = ap.parse_args(argv)
    if not Path(args.corpus).is_dir():
        raise SystemExit(f"bench_dense_retrieval: corpus not found at {args.corpus}")

    work, params_data = project_copy("bench_dense_")
    params_data["corpus"]["dir"] = str(Path(args.corpus).resolve())
    params_data["chunkings"] = {"c256": {"size": 256, "overlap": 32}}
    params_data["qagen"]["reference_chunking"] = "c256"
    write_params(work, params_data)
    try:
        with working_dir(work):
            run(args)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(args: argparse.Namespace) -> None:
    import faiss
    import polars as pl

    from ragcourt.core.offline import apply

    apply()  # offline env
    from ragcourt.core import catalog
    from ragcourt.core.io import read_table, write_parquet, write_with
    from ragcourt.corpus import chunking as chunk
    from ragcourt.corpus import ingest
    from ragcourt.orchestration.params import load_params
    from ragcourt.retrieval import indexing as embed
    from ragcourt.retrieval.embedders import encode
    from ragcourt.retrieval.retrieve import open_retriever

    params = load_params("params.yaml")
    t0 = time.perf_counter()
    ingest.run(params)
    t_ingest = time.perf_counter() - t0
    docs = read_table(ingest.DOCUMENTS_PATH, "documents")
    t0 = time.perf_counter()
    chunk.run(params, "c256")
    t_chunk = time.perf_counter() - t0
    chunks = read_table(catalog.path("chunks", chunking="c256"), "chunks")
    spec = params.embedders[args.embedder]

    key = hashlib.sha256(
        (spec.model + "\x1f" + "\x1f".join(chunks["chunk_id"]) + "\x1f".join(chunks["text"]))
        .encode()
    ).hexdigest()[:16]  # fmt: skip
    cached = CACHE / f"sotu_c256_{args.embedder}_{key}.parquet"
    t_embed = None
    if cached.is_file():
        emb = read_table(cached, "embeddings")
    else:
        t0 = time.perf_counter()
        embed.run(params, "c256", args.embedder)
        t_embed = time.perf_counter() - t0
        emb = read_table(embed.embeddings_path("c256", args.embedder), "embeddings")
        write_parquet(emb, cached, "embeddings")
    vecs = embed.vectors_of(emb)

    t0 = time.perf_counter()
    index = embed.build_index(vecs)
    t_build = time.perf_counter() - t0
    write_with(embed.index_path("c256", args.embedder), lambda p: faiss.write_index(index, str(p)))
    write_parquet(emb, embed.embeddings_path("c256", args.embedder), "embeddings")

    rng = random.Random(0)
    texts = chunks["text"].to_list()
    picks = [rng.randrange(len(texts)) for _ in range(args.queries)]
    qtexts = []
    for i in picks:
        words = texts[i].split()
        s = rng.randrange(max(1, len(words) - 12))
        qtexts.append(" ".join(words[s : s + 12]))
    queries = pl.DataFrame({"query_id": [f"q{i}" for i in range(len(qtexts))], "query": qtexts})

    retriever = open_retriever("dense", "c256", args.embedder, params)
    retriever.search(queries.head(4), args.k)  # warm-up (model load)
    t0 = time.perf_counter()
    run_df = retriever.search(queries, args.k)
    t_query = time.perf_counter() - t0
    qv = encode(spec.model, qtexts, batch_size=spec.batch_size)
    t0 = time.perf_counter()
    _, f_idx = index.search(qv, args.k)
    t_search = time.perf_counter() - t0

    t0 = time.perf_counter()
    sims = qv @ vecs.T
    exact = np.argsort(-sims, axis=1, kind="stable")[:, : args.k]
    t_numpy = time.perf_counter() - t0
    hits = [len(set(f_idx[i]) & set(exact[i])) for i in range(len(qtexts))]
    recall = sum(hits) / (args.k * len(qtexts))
    tie_only = 0
    for i, h in enumerate(hits):
        if h < args.k:
            kth = sims[i, exact[i, -1]]
            missing = set(f_idx[i]) - set(exact[i])
            if all(abs(sims[i, j] - kth) <= 1e-6 for j in missing):
                tie_only += 1
    # the stage's run table agrees with the raw FAISS result
    ids = emb["chunk_id"].to_list()
    agree = all(
        run_df.filter(pl.col("query_id") == f"q{i}").sort("rank")["chunk_id"].to_list()
        == [ids[j] for j in f_idx[i]]
        for i in range(min(50, len(qtexts)))
    )

    n = len(qtexts)
    print(f"bench_dense_retrieval: {docs.height} documents, {chunks.height} chunks (c256), "
          f"embedder {args.embedder} dim {vecs.shape[1]}, {n} queries, k={args.k}, "
          f"{os.cpu_count()} CPUs")  # fmt: skip
    print(f"  ingest                     : {t_ingest:8.2f} s")
    print(f"  chunk (c256)               : {t_chunk:8.2f} s")
    if t_embed is None:
        print(f"  embed chunks               :   cached ({cached})")
    else:
        print(f"  embed chunks (one-off)     : {t_embed:8.2f} s  {chunks.height / t_embed:.1f}/s")
    print(f"  FAISS IndexFlatIP build    : {t_build * 1000:8.1f} ms")
    print(f"  retrieve 1 batch (embed+search): {t_query:6.2f} s  {n / t_query:8.1f} queries/s")
    print(
        f"  FAISS search only          : {t_search * 1000:8.1f} ms  {n / t_search:8.0f} queries/s"
    )
    print(f"  numpy exact top-{args.k}          : {t_numpy * 1000:8.1f} ms")
    missed = sum(h < args.k for h in hits)
    print(f"  recall@{args.k} FAISS vs numpy    : {recall:.4f}  (queries with a miss: "
          f"{missed}, of which exact-score ties only: {tie_only})")  # fmt: skip
    print(f"  stage run table == raw FAISS ids (first 50 queries): {agree}")
