"""Benchmark QA generation: accepted items per minute and acceptance rate (single process).

Builds a throw-away project in a temp dir (the demo corpus, or ``--docs`` of its addresses;
the real ingest and chunk stages), then times ``ragcourt.qagen.stage.run`` with an empty LLM cache,
so every call reaches the model, and checks every accepted span is verbatim in its document.
RAGalyst reports 0.88 accepted items/min single-threaded with GPT-4o-mini, for orientation.

    python -m benchmarks qagen                      # embedded local model
    python -m benchmarks qagen --n-items 10 --max-attempts 30 --model openai/gpt-4o-mini
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from collections.abc import Sequence
from pathlib import Path

from benchmarks._common import ROOT, project_copy, working_dir, write_params


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=None, help="litellm model string (default: params)")
    ap.add_argument("--n-items", type=int, default=5)
    ap.add_argument("--max-attempts", type=int, default=12)
    ap.add_argument("--corpus", default=str(ROOT / "data/corpus"), help="folder of .txt files")
    ap.add_argument("--docs", type=int, default=0, help="use this many files (0: all)")
    ap.add_argument("--chunk-size", type=int, default=512)
    ap.add_argument("--keep", action="store_true", help="keep the temp project")
    args = ap.parse_args(argv)

    corpus = sorted(Path(args.corpus).glob("*.txt"))
    if not corpus:
        raise SystemExit(f"bench_qagen: no .txt files in {args.corpus}")
    n = args.docs or len(corpus)
    picked = corpus[:: max(1, len(corpus) // n)][:n]  # spread over the (dated) file names

    work, params = project_copy("bench_qagen_")
    (work / "data/corpus").mkdir(parents=True)
    for p in picked:
        shutil.copy(p, work / "data/corpus" / p.name)
    params["chunkings"] = {"bench": {"size": args.chunk_size, "overlap": args.chunk_size // 8}}
    params["qagen"].update(
        reference_chunking="bench", n_items=args.n_items, max_attempts=args.max_attempts
    )
    if args.model:
        params["llm"]["model"] = args.model
    params["llm"]["cache_dir"] = str(work / ".cache")  # empty: every call reaches the model
    write_params(work, params)

    try:
        with working_dir(work):
            from ragcourt.core import catalog
            from ragcourt.core.io import read_table
            from ragcourt.corpus import chunking as chunk
            from ragcourt.corpus import ingest
            from ragcourt.orchestration.params import load_params
            from ragcourt.qagen import stage as qagen

            run_params = load_params("params.yaml")
            ingest.run(run_params)
            chunk.run(run_params, chunking="bench")
            t0 = time.perf_counter()
            qagen.run(run_params)
            seconds = time.perf_counter() - t0
            summary = json.loads(catalog.path("qa_summary").read_text())
            llm = json.loads(catalog.llm_metrics(run_params.llm.metrics_dir, "qagen").read_text())
            qa = read_table(catalog.path("qa"), "qa")
            docs = read_table(catalog.path("documents"), "documents")
            texts = dict(zip(docs["doc_id"], docs["text"], strict=True))
            verbatim = sum(
                texts[r["doc_id"]][r["char_start"] : r["char_end"]] == r["context"]
                for r in qa.iter_rows(named=True)
            )
            n_chunks = read_table(catalog.path("chunks", chunking="bench"), "chunks").height
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)

    minutes = seconds / 60
    print(f"corpus: {len(picked)} files, {n_chunks} chunks of {args.chunk_size} tokens")
    print(f"model: {summary['models']}")
    print(f"wall time: {seconds:.1f} s for {summary['attempts']} attempts "
          f"({seconds / max(summary['attempts'], 1):.1f} s per candidate)")  # fmt: skip
    print(f"accepted: {summary['accepted']}/{summary['requested']} "
          f"(stop: {summary['stop_reason']})")  # fmt: skip
    print(f"acceptance rate: {summary['acceptance_rate']:.3f}")
    print(f"accepted items per minute: {summary['accepted'] / minutes:.3f} "
          f"(RAGalyst: 0.88 with GPT-4o-mini)")  # fmt: skip
    print(f"attempts per minute: {summary['attempts'] / minutes:.3f}")
    print(f"rejections: {summary['rejections']}")
    print(f"accepted spans verbatim in their document: {verbatim}/{qa.height}")
    print(f"judge mean scores: {summary['judge_mean_score']}")
    print(f"llm accounting: {json.dumps(llm, sort_keys=True)[:600]}")
    if args.keep:
        print(f"project kept at {work}")
