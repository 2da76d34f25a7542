"""Judging benchmarks: judge calls per verdict (DAFE vs always three judges) and verdicts per
minute on the configured model (default: the embedded local model).

1. Calls per verdict: read from ``data/judge/summary.json`` of a finished run (the demo
   ``dvc repro``), when present.
2. Throughput: ``--n`` items judged with a fresh, empty gateway cache (so every model call
   is real): the LLM judge alone (successful verdicts/min) and the configured DAFE ensemble
   (final verdicts/min, arbitrator calls). Items come from the run's answers + QA when
   present, else from STS-B pairs (reference = sentence1, answer = sentence2).

3. ``--versions v1,v4``: the LLM judge (DAFE's arbitrator) alone under each judge.yaml
   prompt version, side by side on the same items, each with an empty cache: v1 writes a
   JSON verdict with a reason (the generated-verdict judge), v2 and later read P(correct) from
   one next token (the ``judge`` stage before and after). Prints seconds, verdicts/min, the
   speed-up against the first version and how often the verdicts agree with it.

    python -m benchmarks judge --n 20
    python -m benchmarks judge --n 20 --versions v1,v4
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Sequence
from typing import Any

import polars as pl

from benchmarks._common import VALIDATION
from ragcourt.core import catalog
from ragcourt.judging.builders import build_judges
from ragcourt.judging.dafe import dafe_summary, run_dafe
from ragcourt.judging.vocabulary import AnswerItem, JudgeContext
from ragcourt.orchestration.params import load_params

SUMMARY = catalog.path("judge_summary")
ANSWERS = catalog.path("answers")
QA = catalog.path("qa")
STS = VALIDATION / "sts_train.json"


def demo_items(n: int) -> tuple[str, list[AnswerItem]]:
    if ANSWERS.is_file() and QA.is_file():
        rows = (
            pl.read_parquet(ANSWERS)
            .filter(pl.col("error").is_null())
            .join(pl.read_parquet(QA), on="question_id")
            .head(n)
        )
        items = [
            AnswerItem(r["question"], r["answer"], tuple(r["reference_answers"]))
            for r in rows.iter_rows(named=True)
        ]
        return f"{ANSWERS} (+ {QA})", items
    data = json.loads(STS.read_text(encoding="utf-8"))[:n]
    return str(STS), [AnswerItem("", d["sentence2"], (d["sentence1"],)) for d in data]


def calls_per_verdict() -> dict[str, Any] | None:
    if not SUMMARY.is_file():
        return None
    dafe = json.loads(SUMMARY.read_text(encoding="utf-8"))["dafe"]
    keys = (
        "items",
        "final_verdicts",
        "judge_calls",
        "judge_calls_always_three",
        "judge_calls_per_verdict",
        "arbitrator_calls",
        "disagreement_rate",
        "llm_judge_calls",
        "llm_judge_calls_always_three",
    )
    return {k: dafe.get(k) for k in keys}


def throughput(params_path: str, n: int) -> dict[str, Any]:
    params = load_params(params_path)
    with tempfile.TemporaryDirectory() as tmp:
        llm = params.llm.model_copy(update={"cache_dir": tmp, "metrics_dir": tmp})
        params = params.model_copy(update={"llm": llm})
        source, items = demo_items(n)
        ctx = JudgeContext(params, stage="bench_judge")
        jp = params.judge
        judges = build_judges([*jp.primaries, jp.arbitrator], ctx)
        out: dict[str, Any] = {"items": len(items), "source": source, "model": llm.model}
        llm_names = [n for n, j in judges.items() if j.uses_llm]
        if llm_names:
            t0 = time.perf_counter()
            verdicts = judges[llm_names[0]].judge(items)
            dt = time.perf_counter() - t0
            out["llm_judge"] = {
                "judge": llm_names[0],
                "seconds": round(dt, 2),
                # per verdict produced: failed calls do not count as throughput
                "verdicts_per_min": round(60 * sum(v.ok for v in verdicts) / dt, 2),
                "failures": sum(not v.ok for v in verdicts),
            }
        # fresh cache again so DAFE's arbitrator calls are real model calls too
        with tempfile.TemporaryDirectory() as tmp2:
            llm2 = llm.model_copy(update={"cache_dir": tmp2})
            ctx2 = JudgeContext(params.model_copy(update={"llm": llm2}), stage="bench_judge")
            judges2 = build_judges([*jp.primaries, jp.arbitrator], ctx2)
            p1, p2 = (judges2[n] for n in jp.primaries)
            t0 = time.perf_counter()
            decisions = run_dafe(items, p1, p2, judges2[jp.arbitrator])
            dt = time.perf_counter() - t0
        s = dafe_summary(decisions)
        out["dafe"] = {
            "seconds": round(dt, 2),
            "final_verdicts": s["final_verdicts"],
            "verdicts_per_min": round(60 * s["final_verdicts"] / dt, 2),
            "arbitrator_calls": s["arbitrator_calls"],
            "judge_calls_per_verdict": s["judge_calls_per_verdict"],
        }
    return out


def llm_judge_versions(params_path: str, n: int, versions: list[str]) -> list[dict[str, Any]]:
    """The LLM judge alone under each prompt version on the same items, empty cache each."""
    base = load_params(params_path)
    source, items = demo_items(n)
    name = next(k for k, spec in base.judge.judges.items() if spec.kind == "llm")
    rows: list[dict[str, Any]] = []
    first: list[bool | None] | None = None
    for v in versions:
        with tempfile.TemporaryDirectory() as tmp:
            p = base.model_copy(deep=True)
            p.llm.cache_dir, p.llm.metrics_dir = tmp, tmp
            p.judge.judges[name].prompt_version = v
            p.judge.reason = False
            judge_ = build_judges([name], JudgeContext(p, stage="bench_judge"))[name]
            t0 = time.perf_counter()
            verdicts = judge_.judge(items)
            dt = time.perf_counter() - t0
        labels = [v_.verdict if v_.ok else None for v_ in verdicts]
        first = labels if first is None else first
        same = sum(a == b for a, b in zip(first, labels, strict=True) if a is not None)
        rows.append(
            {
                "version": v, "items": len(items), "source": source, "seconds": round(dt, 1),
                "verdicts_per_min": round(60 * sum(x is not None for x in labels) / dt, 1),
                "failures": sum(x is None for x in labels),
                "speed_up": round(rows[0]["seconds"] / dt, 2) if rows else 1.0,
                "agree_with_first": f"{same}/{sum(a is not None for a in first)}",
            }
        )  # fmt: skip
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--params", default="params.yaml")
    ap.add_argument("--n", type=int, default=20, help="items for the throughput run")
    ap.add_argument("--versions", default=None, help="only the LLM judge per prompt version")
    args = ap.parse_args(argv)
    if args.versions:
        for row in llm_judge_versions(args.params, args.n, args.versions.split(",")):
            print(row)
        return
    demo = calls_per_verdict()
    if demo is None:
        print(f"calls per verdict: {SUMMARY} not found (run `dvc repro` first)")
    else:
        print("calls per verdict on the last run (DAFE vs always three judges):")
        for k, v in demo.items():
            print(f"  {k:30s} {v}")
        if demo.get("final_verdicts"):
            three = demo["judge_calls_always_three"] / demo["final_verdicts"]
            print(f"  {'always-three calls/verdict':30s} {three:.3f}")
    res = throughput(args.params, args.n)
    print(f"\nthroughput on {res['items']} items from {res['source']} (model {res['model']}):")
    for part in ("llm_judge", "dafe"):
        if part in res:
            print(f"  {part:10s} {res[part]}")
