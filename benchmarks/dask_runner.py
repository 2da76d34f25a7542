"""Sharded answer, judge and judge_retrieval on the demo: a Dask cluster of N worker
processes x 1 thread against the thread runner with N threads (wall ratio, identical outputs).

A temp copy of the demo (its corpus, configs/ and params.yaml; the hand-written QA file as a
bring-your-own QA set, the first ``--questions`` of it; ``judge.arbitrator`` set to the
embedding judge so no 1.5B model is loaded) is prepared up to ``qagen`` once (not timed). Two
copies of it then run ``answer``, ``judge`` and ``judge_retrieval`` with
``scale.shard_questions`` = ``--shard``: one on the thread runner (``--workers`` threads), one
on a fresh ``distributed.LocalCluster`` of ``--workers`` single-threaded processes (its start
and each worker's model loads are part of its time). Printed: each wall time, the ratio
thread / dask (1.0: no overhead), whether every output table is the same (:func:`same_outputs`)
and the task seconds per item of each stage. The two runs are kept in a temp folder.

    nice -n 10 python -m benchmarks dask_runner --questions 4 --shard 2 --systems 2 --chunkings 1
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from benchmarks._common import ROOT

if TYPE_CHECKING:
    import polars as pl

STAGES = ["answer", "judge", "judge_retrieval"]
TABLES = ("answers", "verdicts", "correctness", "relevance", "passage_utility", "udcg")


def _flat_columns(x: pl.Series, y: pl.Series) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Two columns with lists exploded and structs unnested, as frames of plain columns."""
    import polars as pl

    while isinstance(x.dtype, pl.List):
        x, y = x.explode(), y.explode()
    if isinstance(x.dtype, pl.Struct):
        return x.struct.unnest(), y.struct.unnest()
    return x.to_frame(), y.to_frame()


def prepare(work: Path, questions: int, systems: int, chunkings: int) -> Path:
    """The demo project in ``work/base`` with the first ``questions`` QA items, the first
    ``systems`` systems (0: all, and the controls; else no controls) and the first
    ``chunkings`` chunkings, run up to qagen."""
    base = work / "base"
    shutil.copytree(ROOT / "configs", base / "configs")
    shutil.copytree(ROOT / "data/corpus", base / "data/corpus")
    qa_lines = (ROOT / "data/demo_qa/handwritten.jsonl").read_text(encoding="utf-8").splitlines()
    (base / "qa.jsonl").write_text("\n".join(qa_lines[:questions]) + "\n", encoding="utf-8")
    params: dict[str, Any] = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    params["qagen"]["qa_file"] = "qa.jsonl"
    params["judge"]["arbitrator"] = "ref_similarity"
    params["chunkings"] = dict(list(params["chunkings"].items())[:chunkings])
    if systems:
        config = yaml.safe_load((base / "configs/systems.yaml").read_text(encoding="utf-8"))
        config["systems"] = config["systems"][:systems]
        text = yaml.safe_dump(config, sort_keys=False)
        (base / "configs/systems.yaml").write_text(text, encoding="utf-8")
        params["controls"]["kinds"] = []
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


def same_outputs(a: Path, b: Path) -> dict[str, str]:
    """Per table: ``bytes`` when the files are equal, else ``values`` when every non-float
    value is equal and floats agree to 1e-6 (with the largest gap), else ``DIFFERENT: col``
    (answers without the measured ``latency_s`` and ``cached``)."""
    import polars as pl

    from ragcourt.core import catalog

    out: dict[str, str] = {}
    for name in TABLES:
        path = catalog.spec(name).template
        if (a / path).read_bytes() == (b / path).read_bytes():
            out[name] = "bytes"
            continue
        left, right = (pl.read_parquet(w / path) for w in (a, b))
        left, right = (df.drop(["latency_s", "cached"], strict=False) for df in (left, right))
        worst = 0.0
        for col in left.columns:
            frames = _flat_columns(left[col], right[col])
            for c in frames[0].columns:
                u, v = frames[0][c], frames[1][c]
                if u.dtype == pl.Float64 and v.dtype == pl.Float64:
                    gap = (u - v).abs().max()
                    worst = max(worst, float(gap) if isinstance(gap, float) else 0.0)
                elif not u.equals(v):
                    out[name] = f"DIFFERENT: {col}.{c}"
        out.setdefault(
            name,
            f"values (floats within {worst:.1e})"
            if worst <= 1e-6
            else f"DIFFERENT: floats {worst:.1e}",
        )
    return out


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=6, help="QA items of the demo file used")
    ap.add_argument("--shard", type=int, default=2, help="scale.shard_questions")
    ap.add_argument("--workers", type=int, default=2, help="threads / Dask worker processes")
    ap.add_argument("--systems", type=int, default=0, help="first N systems, no controls (0: all)")
    ap.add_argument("--chunkings", type=int, default=2, help="first N chunkings of the demo")
    args = ap.parse_args(argv)
    from ragcourt.core.offline import apply

    apply()
    work = Path(tempfile.mkdtemp(prefix="ragcourt-dask-bench-"))
    base = prepare(work, args.questions, args.systems, args.chunkings)
    thread_s, thread_tasks = timed_copy(base, work / "thread", args.shard, "thread", args.workers)
    dask_s, dask_tasks = timed_copy(base, work / "dask", args.shard, "dask", args.workers)
    items = rows(work / "thread")
    report = {
        "questions": args.questions,
        "shard_questions": args.shard,
        "workers": args.workers,
        "systems": args.systems or "all, with the controls",
        "chunkings": args.chunkings,
        "thread_wall_s": round(thread_s, 1),
        "dask_wall_s": round(dask_s, 1),
        "wall_ratio_thread_over_dask": round(thread_s / dask_s, 3),
        "same_outputs": same_outputs(work / "thread", work / "dask"),
        "items": items,  # answers, verdicts, relevance rows (judged passages)
        "task_s_thread": thread_tasks,
        "task_s_dask": dask_tasks,
        "task_s_per_item_dask": {
            s: round(dask_tasks[s] / items[s], 3) for s in items if items[s] and s in dask_tasks
        },
    }
    print(json.dumps(report, indent=2))
    print(f"runs kept in {work}")
