"""Benchmark a cold ``dvc repro`` of the foundation stages (ingest, chunk, embed) on the demo
corpus: wall time and time per stage, then a second ``dvc repro`` (must run nothing).

Copies ragcourt/, configs/, params.yaml, data/corpus and the ingest/chunk/embed blocks of
dvc.yaml into a fresh git + DVC repo in a temp dir, so the real project is untouched.
``--all`` keeps every stage of dvc.yaml (the whole pipeline, LLM stages included).
Per-stage times are the gaps between DVC's "Running stage" lines.

    python -m benchmarks repro
    python -m benchmarks repro --all
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import yaml

from benchmarks._common import ROOT
from ragcourt.orchestration.stage_graph import CODE_STEP

FOUNDATION = ("ingest", "chunk", "embed")


def sh(cwd: Path, *args: str) -> None:
    subprocess.run(args, cwd=cwd, check=True, capture_output=True, env=_env())


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env.pop("PYTHONPATH", None)
    return env


def timed_repro(repo: Path) -> tuple[float, list[tuple[str, float]], str]:
    """Run ``dvc repro``, timing each stage from its "Running stage" line to the next."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        ["dvc", "repro"], cwd=repo, env=_env(), stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, bufsize=1,
    )  # fmt: skip
    marks: list[tuple[str, float]] = []
    out: list[str] = []
    assert proc.stdout is not None
    for line in proc.stdout:
        out.append(line)
        m = re.search(r"Running stage '([^']+)'", line)
        if m:
            marks.append((m.group(1), time.perf_counter()))
    rc = proc.wait()
    end = time.perf_counter()
    if rc != 0:
        raise SystemExit(f"dvc repro failed (exit {rc}):\n{''.join(out[-40:])}")
    stages = [
        (name, (marks[i + 1][1] if i + 1 < len(marks) else end) - t)
        for i, (name, t) in enumerate(marks)
    ]
    return end - t0, stages, "".join(out)


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--all", action="store_true", help="every stage of dvc.yaml")
    ap.add_argument("--keep", action="store_true", help="keep the temp repo")
    args = ap.parse_args(argv)

    repo = Path(tempfile.mkdtemp(prefix="bench_repro_"))
    ignore = shutil.ignore_patterns("__pycache__")
    for folder in ("ragcourt", "configs"):  # ragcourt/: dvc.yaml's code deps
        shutil.copytree(ROOT / folder, repo / folder, ignore=ignore)
    shutil.copytree(ROOT / "data/corpus", repo / "data/corpus")
    shutil.copy(ROOT / "params.yaml", repo / "params.yaml")
    dvc = yaml.safe_load((ROOT / "dvc.yaml").read_text())
    if not args.all:
        kept = (CODE_STEP, *FOUNDATION)  # the code step writes the digests the stages track
        dvc["stages"] = {k: v for k, v in dvc["stages"].items() if k in kept}
    (repo / "dvc.yaml").write_text(yaml.safe_dump(dvc, sort_keys=False))
    for cmd in (
        ("git", "init", "-q"),
        ("git", "config", "user.email", "bench@example.com"),
        ("git", "config", "user.name", "bench"),
        ("dvc", "init", "-q"),
        ("dvc", "config", "core.analytics", "false"),
        ("git", "add", "-A"),
        ("git", "commit", "-q", "-m", "bench"),
    ):
        sh(repo, *cmd)

    from ragcourt.retrieval.embedders import cache_root

    warm = sorted(p.name for p in cache_root().glob("*") if (p / ".ragcourt-complete").is_file())
    try:
        wall, stages, _ = timed_repro(repo)
        wall2, stages2, _ = timed_repro(repo)
    finally:
        if not args.keep:
            shutil.rmtree(repo, ignore_errors=True)
    n_docs = len(list((ROOT / "data/corpus").iterdir()))
    print(f"bench_repro: dvc repro of {'all stages' if args.all else 'ingest/chunk/embed'} "
          f"on the demo corpus ({n_docs} files), {os.cpu_count()} CPUs")  # fmt: skip
    print(f"  extracted model cache already present: {warm or 'none'}")
    for name, secs in stages:
        print(f"  {name:<28} {secs:8.1f} s")
    print(f"  {'cold dvc repro wall time':<28} {wall:8.1f} s")
    print(f"  second dvc repro: {wall2:.1f} s, stages run: {[n for n, _ in stages2] or 'none'}")
    if args.keep:
        print(f"  repo kept at {repo}")
