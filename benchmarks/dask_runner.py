"""Sharded answer, judge and judge_retrieval on the demo: a Dask cluster of N worker
processes x 1 thread against the thread runner with N threads (wall ratio, identical outputs).

A temp copy of the demo (its corpus, configs/ and params.yaml; the hand-written QA file as a
bring-your-own QA set, the first ``--questions`` of it; ``judge.arbitrator`` set to the
embedding judge so no 1.5B model is loaded) is prepared up to ``qagen`` once (not timed). Two
copies of it then run ``answer``, ``judge`` and ``judge_retrieval`` with
``scale.shard_questions`` = ``--shard``: one on the thread runner (``--workers`` threads), one
on a fresh ``distributed.LocalCluster`` of ``--workers`` single-threaded processes (its start
and each worker's model loads are part of its time). Printed: each wall time, the ratio
thread / dask (1.0: no overhead), and whether every output table is the same (answers without
``latency_s`` and ``cached``, the judge tables byte for byte).

    nice -n 10 python -m benchmarks dask_runner --questions 6 --shard 2
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from benchmarks._common import ROOT

STAGES = ["answer", "judge", "judge_retrieval"]
TABLES = ("answers", "verdicts", "correctness", "relevance", "passage_utility", "udcg")


def prepare(work: Path, questions: int) -> Path:
    """The demo project in ``work/base``, run up to qagen with the first ``questions`` QA items."""
    base = work / "base"
    shutil.copytree(ROOT / "configs", base / "configs")
    shutil.copytree(ROOT / "data/corpus", base / "data/corpus")
    qa_lines = (ROOT / "data/demo_qa/handwritten.jsonl").read_text(encoding="utf-8").splitlines()
    (base / "qa.jsonl").write_text("\n".join(qa_lines[:questions]) + "\n", encoding="utf-8")
    params: dict[str, Any] = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    params["qagen"]["qa_file"] = "qa.jsonl"
    params["judge"]["arbitrator"] = "ref_similarity"
    (base / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False), encoding="utf-8")
    from flows.pipeline import pipeline

    pipeline(workdir=str(base), until="qagen", publish=False)
    return base


def timed_copy(
    base: Path, dest: Path, shard: int, runner: str, workers: int
) -> tuple[float, dict[str, float]]:
    """Copy ``base`` to ``dest`` with ``scale.shard_questions`` = ``shard`` and run the three
    stages there on ``runner``; the wall seconds of the flow and the summed task seconds of
    each stage."""
    from flows.pipeline import pipeline

    shutil.copytree(base, dest)
    params = yaml.safe_load((dest / "params.yaml").read_text(encoding="utf-8"))
    params["scale"] = {**params.get("scale", {}), "shard_questions": shard}
    (dest / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False), encoding="utf-8")
    start = time.perf_counter()
    results = pipeline(
        workdir=str(dest), only=STAGES, task_runner=runner, workers=workers, publish=False
    )
    wall = time.perf_counter() - start
    per_stage: dict[str, float] = {}
    for r in results:
        stage = str(r["call"]).split("[")[0]
        per_stage[stage] = round(per_stage.get(stage, 0.0) + float(r["seconds"]), 1)
    return wall, per_stage


def rows(ws: Path) -> dict[str, int]:
    """Rows of the answers and verdicts tables and the number of relevance rows (passages)."""
    import polars as pl

    from ragcourt.core import catalog

    names = {"answers": "answer", "verdicts": "judge", "relevance": "judge_retrieval"}
    return {
        stage: pl.read_parquet(ws / catalog.spec(t).template).height for t, stage in names.items()
    }


def same_outputs(a: Path, b: Path) -> dict[str, bool]:
    """Per table: equal rows (answers without the measured columns), judge tables by bytes."""
    import polars as pl

    from ragcourt.core import catalog

    out = {}
    for name in TABLES:
        path = catalog.spec(name).template
        if name == "answers":
            drop = ["latency_s", "cached"]
            left = pl.read_parquet(a / path).drop(drop)
            out[name] = left.equals(pl.read_parquet(b / path).drop(drop))
        else:
            out[name] = (a / path).read_bytes() == (b / path).read_bytes()
    return out


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=6, help="QA items of the demo file used")
    ap.add_argument("--shard", type=int, default=2, help="scale.shard_questions")
    ap.add_argument("--workers", type=int, default=2, help="threads / Dask worker processes")
    args = ap.parse_args(argv)
    from ragcourt.core.offline import apply

    apply()
    work = Path(tempfile.mkdtemp(prefix="ragcourt-dask-bench-"))
    base = prepare(work, args.questions)
    thread_s, thread_tasks = timed_copy(base, work / "thread", args.shard, "thread", args.workers)
    dask_s, dask_tasks = timed_copy(base, work / "dask", args.shard, "dask", args.workers)
    items = rows(work / "thread")
    report = {
        "questions": args.questions,
        "shard_questions": args.shard,
        "workers": args.workers,
        "thread_wall_s": round(thread_s, 1),
        "dask_wall_s": round(dask_s, 1),
        "wall_ratio_thread_over_dask": round(thread_s / dask_s, 3),
        "identical": same_outputs(work / "thread", work / "dask"),
        "items": items,  # answers, verdicts, relevance rows (judged passages)
        "task_s_thread": thread_tasks,
        "task_s_dask": dask_tasks,
        "task_s_per_item_dask": {
            s: round(dask_tasks[s] / items[s], 3) for s in items if items[s] and s in dask_tasks
        },
    }
    print(json.dumps(report, indent=2))
    shutil.rmtree(work, ignore_errors=True)
