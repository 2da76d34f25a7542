"""Benchmark the embed stage against a bare ``SentenceTransformer.encode`` (target ratio >= 0.9).

Builds a throw-away project from the demo corpus (data/corpus), runs the real ingest and chunk
stages, then times, on the same chunks with the same batch size and an already-loaded model:

* bare:  ``model.encode(texts, batch_size=B, normalize_embeddings=True)``
* stage: ``ragcourt.retrieval.indexing.run`` (read chunks Parquet, truncation count, encode, FAISS
  build, atomic Parquet + index writes)

Each is run ``--repeats`` times alternately; the best wall time of each is reported (the
machine is shared, best-of is the least noisy estimate of the code's own cost), and the ratio
of process CPU time, which other processes' load disturbs less than wall time.

    python -m benchmarks embed                          # minilm, c256
    python -m benchmarks embed --embedder mpnet --chunking c512 --repeats 2
    python -m benchmarks embed --glibc-malloc       # without the stages' malloc settings

The process takes the malloc settings every stage entry takes
(:func:`ragcourt.core.allocator.bound_heap`) unless ``--glibc-malloc``: run both to see what
they cost (one process each, since malloc's settings are per process).
"""

from __future__ import annotations

import argparse
import os
import shutil
import time
from collections.abc import Sequence

from benchmarks._common import ROOT, project_copy, working_dir, write_params


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunking", default="c256")
    ap.add_argument("--embedder", default="minilm")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--corpus", default=str(ROOT / "data/corpus"))
    ap.add_argument(
        "--glibc-malloc", action="store_true", help="keep glibc's malloc defaults (no bound_heap)"
    )
    args = ap.parse_args(argv)

    work, params_data = project_copy("bench_embed_")
    shutil.copytree(args.corpus, work / "data/corpus")
    write_params(work, params_data)
    try:
        with working_dir(work):
            from ragcourt.core.offline import apply

            apply()  # offline env
            if not args.glibc_malloc:
                from ragcourt.core.allocator import bound_heap

                bound_heap()
            from ragcourt.core import catalog
            from ragcourt.core.io import read_table
            from ragcourt.corpus import chunking as chunk
            from ragcourt.corpus import ingest
            from ragcourt.orchestration.params import load_params
            from ragcourt.retrieval import indexing as embed
            from ragcourt.retrieval.embedders import load_embedder

            params = load_params("params.yaml")
            ingest.run(params)
            chunk.run(params, args.chunking)
            chunks = read_table(catalog.path("chunks", chunking=args.chunking), "chunks")
            texts = chunks["text"].to_list()
            spec = params.embedders[args.embedder]
            model = load_embedder(spec.model)
            model.encode(texts[:8], batch_size=spec.batch_size)  # warm-up
            bare_times, stage_times, bare_cpu, stage_cpu = [], [], [], []
            for _ in range(args.repeats):
                t0, c0 = time.perf_counter(), time.process_time()
                model.encode(texts, batch_size=spec.batch_size, normalize_embeddings=True)
                bare_times.append(time.perf_counter() - t0)
                bare_cpu.append(time.process_time() - c0)
                t0, c0 = time.perf_counter(), time.process_time()
                embed.run(params, args.chunking, args.embedder)
                stage_times.append(time.perf_counter() - t0)
                stage_cpu.append(time.process_time() - c0)
            bare, stage = min(bare_times), min(stage_times)
            n = len(texts)
            print(f"bench_embed: {n} chunks ({args.chunking}), embedder {args.embedder} "
                  f"({spec.model}), batch size {spec.batch_size}, "
                  f"{os.cpu_count()} CPUs, malloc "
                  f"{'glibc defaults' if args.glibc_malloc else 'bound_heap'}")  # fmt: skip
            print(f"  bare SentenceTransformer.encode : {bare:7.2f} s  {n / bare:7.1f} chunks/s")
            print(f"  embed stage (run)               : {stage:7.2f} s  {n / stage:7.1f} chunks/s")
            print(f"  throughput ratio stage/bare     : {bare / stage:.3f}  (target >= 0.9)")
            print(f"  CPU-time ratio stage/bare       : {min(bare_cpu) / min(stage_cpu):.3f}  "
                  f"(process CPU s, less sensitive to other load: {min(bare_cpu):.1f} vs "
                  f"{min(stage_cpu):.1f})")  # fmt: skip
            print(f"  all runs bare  : {', '.join(f'{t:.2f}' for t in bare_times)}")
            print(f"  all runs stage : {', '.join(f'{t:.2f}' for t in stage_times)}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
