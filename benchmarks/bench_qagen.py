"""Benchmark QA generation: accepted items per minute and acceptance rate (single process).

Builds a throw-away project in a temp dir (a few State of the Union addresses, the real
ingest and chunk stages), then times ``stages.qagen.run`` with an empty LLM cache, so every
call reaches the model. RAGalyst reports 0.88 accepted items/min single-threaded with
GPT-4o-mini, for orientation.

    python benchmarks/bench_qagen.py                      # embedded local model
    python benchmarks/bench_qagen.py --n-items 10 --max-attempts 30 --model openai/gpt-4o-mini
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
SOTU = ROOT.parent / "shared" / "corpora" / "sotu"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=None, help="litellm model string (default: params)")
    ap.add_argument("--n-items", type=int, default=5)
    ap.add_argument("--max-attempts", type=int, default=12)
    ap.add_argument("--docs", type=int, default=4, help="number of addresses to use")
    ap.add_argument("--chunk-size", type=int, default=512)
    ap.add_argument("--keep", action="store_true", help="keep the temp project")
    args = ap.parse_args()

    corpus = sorted(SOTU.glob("*.txt"))
    if not corpus:
        raise SystemExit(f"bench_qagen: no corpus at {SOTU}")
    # addresses spread over the years
    step = max(1, len(corpus) // args.docs)
    picked = corpus[::step][: args.docs]

    work = Path(tempfile.mkdtemp(prefix="bench_qagen_"))
    shutil.copytree(ROOT / "configs", work / "configs")
    (work / "data/corpus").mkdir(parents=True)
    for p in picked:
        shutil.copy(p, work / "data/corpus" / p.name)
    params = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    params["chunkings"] = {"bench": {"size": args.chunk_size, "overlap": args.chunk_size // 8}}
    params["qagen"].update(
        reference_chunking="bench", n_items=args.n_items, max_attempts=args.max_attempts
    )
    if args.model:
        params["llm"]["model"] = args.model
    params["llm"]["cache_dir"] = str(work / ".cache")  # empty: every call reaches the model
    (work / "params.yaml").write_text(yaml.safe_dump(params), encoding="utf-8")

    cwd = Path.cwd()
    os.chdir(work)
    try:
        from stages import chunk, ingest, qagen
        from stages.params import load_params

        p = load_params("params.yaml")
        ingest.run(p)
        chunk.run(p, chunking="bench")
        t0 = time.perf_counter()
        qagen.run(p)
        seconds = time.perf_counter() - t0
        summary = json.loads(Path("data/qa/summary.json").read_text())
        llm = json.loads(Path("data/metrics/llm_qagen.json").read_text())
    finally:
        os.chdir(cwd)
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)

    minutes = seconds / 60
    print(f"corpus: {len(picked)} addresses ({', '.join(p.stem for p in picked)})")
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
    print(f"judge mean scores: {summary['judge_mean_score']}")
    print(f"llm accounting: {json.dumps(llm, sort_keys=True)[:600]}")
    if args.keep:
        print(f"project kept at {work}")


if __name__ == "__main__":
    main()
