"""Overhead per call of a ``kind: python`` system run in worker processes (``isolation:
process``, the default) against calling it in the stage's own process (``in_process_unsafe``),
side by side in one run.

A trivial callable (returns the question with two passages) answers ``--questions`` questions
through :func:`ragcourt.answering.external.python_callable.answer_with_python`, the code path
of the answer stage; each mode runs ``--repeats`` times (alternating) at each concurrency, and
the median wall time is reported, split into a one-off start (the first worker importing
ragcourt and the module) and the per-call cost.

    python -m benchmarks python_system_isolation --questions 400
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from ragcourt.answering.external.python_callable import answer_with_python
from ragcourt.answering.external.specs import PythonSpec

MODULE = """
def answer(question):
    return {"answer": "echo " + question, "contexts": ["first passage", "second passage"]}
"""


def _qa(n: int) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "question_id": [f"q{i}" for i in range(n)],
            "question": [f"question {i}?" for i in range(n)],
        }
    )


def _run(isolation: str, concurrency: int, qa: pl.DataFrame) -> float:
    spec = PythonSpec.model_validate(
        {"name": "bench", "kind": "python", "callable": "bench_isolation_target:answer",
         "isolation": isolation, "concurrency": concurrency}
    )  # fmt: skip
    t0 = time.perf_counter()
    df = answer_with_python("bench", "external:python", spec, qa)
    seconds = time.perf_counter() - t0
    assert df["error"].null_count() == len(qa), df.filter(pl.col("error").is_not_null())
    return seconds


def main(argv: Sequence[str] | None = None) -> None:
    """Print one table row per (mode, concurrency): start, per-call cost, ratio."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=int, default=400)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--concurrency", default="1,4")
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="bench-isolation-"))
    (work / "bench_isolation_target.py").write_text(MODULE)
    os.chdir(work)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, {args.questions} questions")
    print("| isolation | concurrency | 1 question s | N questions s | per call ms | ratio |")
    print("|---|---|---|---|---|---|")
    for conc in [int(c) for c in args.concurrency.split(",")]:
        per_call: dict[str, float] = {}
        rows = {}
        for mode in ("in_process_unsafe", "process"):
            one, many = [], []
            for _ in range(args.repeats):
                one.append(_run(mode, conc, _qa(1)))
                many.append(_run(mode, conc, _qa(args.questions)))
            start, total = statistics.median(one), statistics.median(many)
            # the one-question run is (almost) all start: the rest is the calls' own cost
            per_call[mode] = max(total - start, 0.0) / max(args.questions - 1, 1) * 1000
            rows[mode] = (start, total)
        for mode, (start, total) in rows.items():
            ratio = per_call[mode] / per_call["in_process_unsafe"]
            print(
                f"| {mode} | {conc} | {start:.3f} | {total:.3f} | {per_call[mode]:.3f} "
                f"| {ratio:.1f}x |"
            )
