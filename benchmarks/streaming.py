"""Benchmark streaming ingest -> chunk -> embed: peak RSS at corpus x1 and x``--factor``.

Each stage runs in its own child process (``ragcourt.corpus.ingest.run``,
``ragcourt.corpus.chunking.run``, ``ragcourt.retrieval.indexing.run`` on a throw-away project:
:mod:`benchmarks._sotu`, the speeches replicated, copy k prefixed ``Copy k.`` so ingest does
not drop it as a duplicate); its peak RSS is the child's ``ru_maxrss`` (``os.wait4``). The
ratio x``factor`` / x1 is the acceptance figure (<= 1.3). ``--embed-docs`` limits the speeches
the embed stage's corpus is made of (MiniLM embeds ~24 chunks/s on 2 idle cores), and
``--stream-chunks`` sets ``embedders.minilm.stream_chunks`` (smaller than the x1 corpus, so
both sizes run several batches). ``--embed-layers N`` embeds with MiniLM cut to its first N
transformer layers (built here from the installed weights: the same tokenizer, pooling and
384-d vectors at a fraction of the time), so the full x10 corpus can be embedded on 2 cores;
the stage's memory does not depend on the depth of the model. ``--embed-window N`` also cuts
the model's window to N tokens with ``long_chunks: truncate`` (one vector per chunk, its first N
tokens): the streamed path (read a step, encode, write, index) is the same, at a fraction of
the encoder's time.

    nice -n 10 python -m benchmarks streaming                      # ingest+chunk 233 speeches
    nice -n 10 python -m benchmarks streaming --embed-docs 12 --stream-chunks 256
    nice -n 10 python -m benchmarks streaming --only-embed --embed-docs 233 --embed-layers 1
    nice -n 10 python -m benchmarks streaming --only-embed --embed-docs 233 --embed-layers 1 \
        --embed-window 32
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from benchmarks._sotu import sotu_project

STEPS = {
    "ingest": "from ragcourt.corpus import ingest as m; m.run(P)",
    "chunk": "from ragcourt.corpus import chunking as m; m.run(P, 'c256')",
    "embed": "from ragcourt.retrieval import indexing as m; m.run(P, 'c256', 'minilm')",
}
PRELUDE = (
    "from ragcourt.core.offline import apply; apply(); "
    "from ragcourt.core.allocator import bound_heap; bound_heap(); "
    "from ragcourt.orchestration.params import load_params; P = load_params('params.yaml'); "
)


def _sample_rss(pid: int, trace: list[tuple[float, int]], t0: float) -> None:
    """Append (seconds since ``t0``, resident MB) of process ``pid`` every half second until
    it ends."""
    status = Path(f"/proc/{pid}/status")
    while True:
        try:
            text = status.read_text()
        except OSError:
            return
        m = re.search(r"VmRSS:\s+(\d+)", text)
        if m is None:  # a zombie: the child has ended
            return
        trace.append((time.perf_counter() - t0, int(m.group(1)) // 1024))
        time.sleep(0.5)


def rss_profile(trace: list[tuple[float, int]], wall: float, parts: int = 20) -> list[int]:
    """The highest resident MB in each of ``parts`` equal slices of the wall time (0 where a
    slice has no sample): where in the run the memory was held."""
    out = [0] * parts
    for t, mb in trace:
        i = min(parts - 1, int(parts * t / wall)) if wall > 0 else 0
        out[i] = max(out[i], mb)
    return out


def run_step(work: Path, step: str) -> dict[str, Any]:
    """One stage in a child process: wall seconds, peak RSS (MB) and the RSS profile over the
    run (:func:`rss_profile`). The child's stderr goes to a file (a pipe read only after the
    child ends would block a child that logs more than the pipe holds)."""
    t0 = time.perf_counter()
    log = work / f"{step}.stderr.log"
    trace: list[tuple[float, int]] = []
    with log.open("wb") as err_file:
        proc = subprocess.Popen(
            [sys.executable, "-c", PRELUDE + STEPS[step]],
            cwd=work,
            stdout=subprocess.DEVNULL,
            stderr=err_file,
        )
        sampler = threading.Thread(target=_sample_rss, args=(proc.pid, trace, t0), daemon=True)
        sampler.start()
        _, status, usage = os.wait4(proc.pid, 0)
        sampler.join(timeout=2)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        err = log.read_text(encoding="utf-8", errors="replace")
        raise SystemExit(f"{step} failed in {work}:\n{err[-2000:]}")
    return {
        "wall_s": round(wall, 1),
        "peak_rss_mb": round(usage.ru_maxrss / 1024),
        "rss_mb_by_twentieth": rss_profile(trace, wall),
    }


def rows_of(work: Path) -> dict[str, int]:
    import polars as pl

    out = {}
    for name, rel in (
        ("documents", "data/documents.parquet"),
        ("chunks", "data/chunks/c256.parquet"),
        ("vectors", "data/embeddings/c256__minilm.parquet"),
    ):
        if (work / rel).is_file():
            out[name] = pl.scan_parquet(work / rel).select(pl.len()).collect().item()
    return out


TRUNCATE = (
    "import sys; from sentence_transformers import SentenceTransformer; "
    "from ragcourt.retrieval.embedders import resolve_model_dir; "
    "m = SentenceTransformer(str(resolve_model_dir('all-minilm-l6-v2')), device='cpu'); "
    "b = m[0].auto_model; n = int(sys.argv[1]); "
    "b.encoder.layer = b.encoder.layer[:n]; b.config.num_hidden_layers = n; m.save(sys.argv[2])"
)


def truncated_minilm(layers: int) -> Path:
    """MiniLM with only its first ``layers`` transformer layers, saved once under the temp dir
    (built in a child process: a child forked from a large parent starts its peak RSS there)."""
    import tempfile

    out = Path(tempfile.gettempdir()) / f"ragcourt_bench_minilm_l{layers}"
    if not (out / "modules.json").is_file():
        subprocess.run(
            [sys.executable, "-c", PRELUDE + TRUNCATE, str(layers), str(out)],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    return out


def measure(
    replicas: int,
    docs: int | None,
    steps: list[str],
    stream: int,
    layers: int = 0,
    window: int = 0,
) -> dict[str, object]:
    embedder: dict[str, object] = {"stream_chunks": stream}
    if layers:
        embedder["model"] = f"minilm-l{layers}"
    if window:
        embedder["long_chunks"] = "truncate"
    work = sotu_project("bench_stream_", replicas, docs, embedder)
    if layers:
        registry = work / "configs" / "models.yaml"
        models = yaml.safe_load(registry.read_text(encoding="utf-8"))
        entry: dict[str, object] = {
            "source": "path",
            "path": str(truncated_minilm(layers)),
            "dim": 384,
            "languages": ["en"],
        }
        if window:
            entry["window"] = window
        models["embedders"][f"minilm-l{layers}"] = entry
        registry.write_text(yaml.safe_dump(models), encoding="utf-8")
    try:
        result: dict[str, object] = {"replicas": replicas, "speeches": docs or "all"}
        for step in steps:
            result[step] = run_step(work, step)
            print(json.dumps({"replicas": replicas, step: result[step]}), flush=True)
        result["rows"] = rows_of(work)
        return result
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--factor", type=int, default=10)
    ap.add_argument("--docs", type=int, default=None, help="speeches for ingest/chunk (all)")
    ap.add_argument("--embed-docs", type=int, default=0, help="speeches for embed (0: no embed)")
    ap.add_argument("--stream-chunks", type=int, default=256)
    ap.add_argument("--embed-layers", type=int, default=0, help="MiniLM layers kept (0: all 6)")
    ap.add_argument("--only-embed", action="store_true", help="skip the ingest/chunk runs")
    ap.add_argument(
        "--embed-window", type=int, default=0, help="with --embed-layers: window (0: 256 tokens)"
    )
    args = ap.parse_args(argv)
    if args.embed_window and not args.embed_layers:
        ap.error("--embed-window needs --embed-layers (it sets the cut model's window)")
    report: dict[str, object] = {}
    for replicas in () if args.only_embed else (1, args.factor):
        report[f"x{replicas}_ingest_chunk"] = measure(
            replicas, args.docs, ["ingest", "chunk"], args.stream_chunks
        )
    if args.embed_docs:
        for replicas in (1, args.factor):
            report[f"x{replicas}_embed"] = measure(
                replicas,
                args.embed_docs,
                ["ingest", "chunk", "embed"],
                args.stream_chunks,
                args.embed_layers,
                args.embed_window,
            )
            report[f"x{replicas}_embed"]["embed_layers"] = args.embed_layers or 6  # type: ignore[index]
            report[f"x{replicas}_embed"]["embed_window"] = args.embed_window or 256  # type: ignore[index]
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
