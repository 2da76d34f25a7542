"""Benchmark the dense index at scale: build time, RSS, bytes, queries/s and recall@10 vs flat.

Two sources of vectors, each searched with the pipeline's own index code
(:mod:`ragcourt.retrieval.vector_index`: ``new_index`` = ``IndexIDMap`` over FAISS's
``index_factory`` with the inner-product metric, seeded training sample, ``configure_search``):

* ``synthetic`` (default): ``--n`` unit vectors of ``--dim`` dimensions, clustered the way
  sentence embeddings are (a low intrinsic dimension): a latent point is a Gaussian mixture of
  ``--clusters`` standard-normal centres in ``--latent`` dimensions (spread ``--spread``
  around its centre), mapped to ``--dim`` by a fixed random projection, plus isotropic noise
  ``--noise``, then L2-normalised. With the defaults a query's nearest stored vector has
  cosine ~0.77 and its 10th ~0.68 (MiniLM chunk neighbours are in that range), and an
  ``IVF256,Flat`` over 50k vectors finds 0.68 of the top 10 at nprobe 2: not an easy set.
  Queries are fresh draws of the same mixture (not stored vectors). Seeded (``--seed``).
  Exact top 10 by brute force (``faiss.knn``, inner product), cached under ``--cache``.
* ``chunks``: the real chunks of a ``chunks`` Parquet table (``--chunks``, first
  ``--max-chunks`` rows) embedded with the pipeline's embedder; queries are the first sentence
  (at most 30 words) of ``--queries`` seeded chunks, that chunk the one relevant item. Reports
  recall@10 vs flat and MRR@10 / nDCG@10 / Hits@10 under flat and under the index.

Queries/s: all queries in one batched search at k=10, FAISS on ``--threads`` threads, best of
``--repeats``. RSS: the process's peak (``ru_maxrss``) after the build, data included.

    nice -n 10 python -m benchmarks index_scale --factory IVF4096,Flat --nprobe 16 32 64
    nice -n 10 python -m benchmarks index_scale --n 200000 --factory HNSW32 --ef-search 64 128
    nice -n 10 python -m benchmarks index_scale --source chunks --chunks /tmp/sotu/chunks.parquet \\
        --max-chunks 3000 --factory HNSW32 --factory IVF256,Flat
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np


def clustered(
    n: int, dim: int, latent: int, clusters: int, seed: int, spread: float, noise: float
) -> np.ndarray:
    """Unit vectors from the clustered generator of the module docstring (seeded)."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((clusters, latent))
    proj = rng.standard_normal((latent, dim)) / math.sqrt(latent)
    out = np.empty((n, dim), dtype=np.float32)
    for start in range(0, n, 100_000):
        m = min(100_000, n - start)
        z = centres[rng.integers(0, clusters, m)] + spread * rng.standard_normal((m, latent))
        x = z @ proj + noise * rng.standard_normal((m, dim))
        x /= np.linalg.norm(x, axis=1, keepdims=True)
        out[start : start + m] = x
    return out


def data_tag(args: argparse.Namespace) -> str:
    """The cache name of the synthetic data ``args`` draw."""
    return (
        f"n{args.n}_d{args.dim}_l{args.latent}_c{args.clusters}_sp{args.spread}_no{args.noise}"
        f"_s{args.seed}_q{args.queries}"
    )


def built(factory: str, xb: np.ndarray, args: argparse.Namespace) -> tuple[Any, float, bool]:
    """:func:`build`, or with ``--keep-index`` the index a previous run built and saved under
    ``--cache`` (its recorded build time): the index, build seconds, whether it was loaded."""
    import faiss

    if not args.keep_index:
        return (*build(factory, xb, args.seed), False)
    name = f"{data_tag(args)}_{factory.replace(',', '_')}_{'par' if args.parallel_hnsw else 'one'}"
    path, meta = Path(args.cache) / f"{name}.faiss", Path(args.cache) / f"{name}.json"
    if path.is_file() and meta.is_file():
        return faiss.read_index(str(path)), json.loads(meta.read_text())["build_s"], True
    index, build_s = build(factory, xb, args.seed)
    faiss.write_index(index, str(path))
    meta.write_text(json.dumps({"build_s": build_s}))
    return index, build_s, False


def synthetic(args: argparse.Namespace) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(stored vectors, queries, exact top-10 labels), cached as .npy under ``--cache``."""
    import faiss

    tag = data_tag(args)
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    xb_p, xq_p, gt_p = (cache / f"{tag}_{x}.npy" for x in ("xb", "xq", "gt"))
    if not xb_p.is_file():
        both = clustered(
            args.n + args.queries,
            args.dim,
            args.latent,
            args.clusters,
            args.seed,
            args.spread,
            args.noise,
        )
        np.save(xb_p, both[: args.n])
        np.save(xq_p, both[args.n :])
        del both
    xb = np.load(xb_p, mmap_mode="r")
    xq = np.load(xq_p)
    if not gt_p.is_file():
        t0 = time.perf_counter()
        _, gt = faiss.knn(xq, np.ascontiguousarray(xb), 10, metric=faiss.METRIC_INNER_PRODUCT)
        np.save(gt_p, gt)
        print(f"exact top 10 (brute force): {time.perf_counter() - t0:.1f} s")
    return xb, xq, np.load(gt_p)


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def build(factory: str, xb: np.ndarray, seed: int) -> tuple[Any, float]:
    """The pipeline's index for ``factory`` over ``xb`` (labels = row numbers), its build s."""
    from ragcourt.retrieval.vector_index import TRAIN_SAMPLE, has_hnsw, new_index, one_thread_if

    t0 = time.perf_counter()
    index = new_index(factory, xb.shape[1], "--factory")
    if not index.is_trained:
        rng = np.random.default_rng(seed)
        pos = np.sort(rng.choice(len(xb), size=min(len(xb), TRAIN_SAMPLE), replace=False))
        index.train(np.ascontiguousarray(xb[pos]))
    with one_thread_if(has_hnsw(index) and not ARGS_PARALLEL_HNSW[0]):
        for start in range(0, len(xb), 65_536):
            block = np.ascontiguousarray(xb[start : start + 65_536])
            index.add_with_ids(block, np.arange(start, start + len(block), dtype=np.int64))
    return index, time.perf_counter() - t0


ARGS_PARALLEL_HNSW = [False]


def index_bytes(index: Any) -> int:
    import faiss

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "i.faiss")
        faiss.write_index(index, path)
        return os.path.getsize(path)


def search_timed(index: Any, xq: np.ndarray, repeats: int) -> tuple[np.ndarray, float, float]:
    """Labels, queries/s (best wall time of ``repeats``) and process CPU seconds per query
    (of that run; all threads), which other processes' load disturbs less than wall time."""
    best, cpu = math.inf, math.inf
    labels = np.zeros((0, 10), dtype=np.int64)
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        _, labels = index.search(xq, 10)
        wall, used = time.perf_counter() - t0, time.process_time() - c0
        if wall < best:
            best, cpu = wall, used
    return labels, len(xq) / best, cpu / len(xq)


def recall10(labels: np.ndarray, truth: np.ndarray) -> float:
    return float(
        np.mean([len(set(a) & set(t)) / len(t) for a, t in zip(labels, truth, strict=True)])
    )


def sweep(
    index: Any, xq: np.ndarray, truth: np.ndarray, args: argparse.Namespace
) -> list[dict[str, Any]]:
    """Recall@10 and queries/s at each search breadth the index has."""
    import faiss

    from ragcourt.retrieval.params import EmbedderSpec
    from ragcourt.retrieval.vector_index import configure_search, has_hnsw, inner_index

    ivf = faiss.try_extract_index_ivf(inner_index(index)) is not None
    settings = (
        [("nprobe", v) for v in args.nprobe]
        if ivf
        else [("ef_search", v) for v in args.ef_search]
        if has_hnsw(index)
        else [("exact", 0)]
    )
    rows = []
    for name, value in settings:
        if name != "exact":
            configure_search(index, EmbedderSpec.model_validate({"model": "x", name: value}))
        labels, qps, cpu_q = search_timed(index, xq, args.repeats)
        rows.append(
            {
                name: value,
                "recall_at_10": round(recall10(labels, truth), 4),
                "qps": round(qps),
                "cpu_ms_per_query": round(cpu_q * 1000, 3),
                "qps_if_2_free_cores": round(2 / cpu_q) if cpu_q else None,
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    import faiss

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", choices=["synthetic", "chunks"], default="synthetic")
    ap.add_argument("--factory", action="append", help="FAISS factory string (repeatable)")
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--latent", type=int, default=48)
    ap.add_argument("--clusters", type=int, default=2000)
    ap.add_argument("--spread", type=float, default=0.7)
    ap.add_argument("--noise", type=float, default=0.1)
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--nprobe", type=int, nargs="+", default=[16, 32, 64])
    ap.add_argument("--ef-search", type=int, nargs="+", default=[64, 128, 256])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--parallel-hnsw", action="store_true", help="HNSW add on all threads")
    ap.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "ragcourt_index_scale"))
    ap.add_argument(
        "--keep-index",
        action="store_true",
        help="save the built index under --cache and load it on the next run (its build time "
        "is the recorded one; peak RSS then covers loading, not building)",
    )
    ap.add_argument("--chunks", help="chunks Parquet table (--source chunks)")
    ap.add_argument("--max-chunks", type=int, default=3000)
    ap.add_argument("--embedder", default="all-minilm-l6-v2")
    args = ap.parse_args(argv)
    faiss.omp_set_num_threads(args.threads)
    ARGS_PARALLEL_HNSW[0] = args.parallel_hnsw
    if args.source == "chunks":
        from benchmarks._index_chunks import run_chunks

        run_chunks(args)
        return
    xb, xq, truth = synthetic(args)
    print(f"data: {len(xb)} x {xb.shape[1]} stored, {len(xq)} queries; rss {rss_mb():.0f} MB")
    for factory in args.factory or ["Flat"]:
        index, build_s, loaded = built(factory, xb, args)
        out = {
            "factory": factory,
            "n": len(xb),
            "build_s": round(build_s, 1),
            "index_loaded_from_cache": loaded,
            "index_bytes": index_bytes(index),
            "peak_rss_mb": round(rss_mb()),
            "threads": args.threads,
            "hnsw_build_threads": args.threads if args.parallel_hnsw else 1,
        }
        print(json.dumps(out), flush=True)
        out["search"] = sweep(index, xq, truth, args)
        del index


if __name__ == "__main__":
    main()
