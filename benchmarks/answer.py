"""Benchmark the answer stage: answers per minute per system, and where the wall time goes.

Runs the stage's own functions (``retrieve_group``, ``answer_system``) over the first
``--questions`` items of ``data/qa/qa.parquet`` in the current project (run ``dvc repro qagen``
first, or pass ``--qa`` with any table of type ``qa``), with the gateway's disk cache OFF so
every model call is real. Nothing is written under data/.

Per system: wall time = its group's retrieval (search + RAG-Fusion variant calls, paid once per
group and charged to every system sharing it) + its own answer generation.
answers/min = questions / wall × 60. Shares: retrieval = search + opening the retriever
(embedder/index load); generation = every LLM call (variants + answers).

    python -m benchmarks answer --questions 10 [--systems dense-k5 bm25-k5]
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from ragcourt.answering.generation import answer_system
from ragcourt.answering.protocols import Chatter
from ragcourt.answering.retrieval_groups import retrieve_group
from ragcourt.answering.stage import QA_PATH, select_systems
from ragcourt.answering.systems import group_by_retrieval, load_systems
from ragcourt.core.entry import setup_logging
from ragcourt.core.io import read_table
from ragcourt.llm.types import ChatRequest, ChatResult
from ragcourt.orchestration.params import load_params


class TimedGateway:
    """Wraps the gateway; adds the wall time of every ``chat`` call to ``seconds``."""

    def __init__(self, inner: Chatter) -> None:
        self.inner = inner
        self.seconds = 0.0

    def chat(self, reqs: list[ChatRequest], desc: str = "") -> list[ChatResult]:
        t0 = time.perf_counter()
        out = self.inner.chat(reqs, desc=desc)
        self.seconds += time.perf_counter() - t0
        return out


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--params", default="params.yaml")
    ap.add_argument("--qa", default=str(QA_PATH))
    ap.add_argument("--questions", type=int, default=10)
    ap.add_argument("--systems", nargs="+", default=None)
    args = ap.parse_args(argv)
    setup_logging()  # the gateway logs one line per batch: progress on slow machines

    from ragcourt.llm import Gateway
    from ragcourt.retrieval.retrieve import RETRIEVERS, open_retriever

    params = load_params(args.params)
    params.llm.cache = False  # time real model calls, not cache hits
    systems = select_systems(load_systems(params), args.systems)
    qa = read_table(Path(args.qa), "qa").head(args.questions)
    gw = TimedGateway(Gateway(params.llm, stage="bench_answer"))

    rows = []
    spent = {"retrieval": 0.0, "generation": 0.0}
    t_all, cpu_all = time.perf_counter(), time.process_time()
    for key, members in group_by_retrieval(systems).items():
        kind = key.retriever if key.retriever in RETRIEVERS else None
        if kind is None:  # a control (oracle, random, none): no index, nothing to time
            print(f"{key.label}: a control retriever, not benchmarked")
            continue
        t0 = time.perf_counter()
        retriever = open_retriever(kind, key.chunking, key.embedder, params)
        open_s = time.perf_counter() - t0
        gw.seconds = 0.0
        t0 = time.perf_counter()
        group = retrieve_group(key, qa, params, retriever, gw)
        group_wall = time.perf_counter() - t0
        variants_s = gw.seconds
        search_s = open_s + group_wall - variants_s
        spent["retrieval"] += search_s
        spent["generation"] += variants_s
        for s in members:
            gw.seconds = 0.0
            t0 = time.perf_counter()
            df = answer_system(s, qa, group, params, gw)
            gen_wall = time.perf_counter() - t0
            retrieval = search_s
            generation = variants_s + gw.seconds
            spent["generation"] += gw.seconds
            other = gen_wall - gw.seconds  # prompt building, frame assembly
            wall = retrieval + generation + other
            rows.append(
                {
                    "system": s.name,
                    "retrieval_group": key.label,
                    "questions": qa.height,
                    "errors": df["error"].drop_nulls().len(),
                    "wall_s": round(wall, 2),
                    "answers_per_min": round(qa.height / wall * 60, 1),
                    "retrieval_s": round(retrieval, 2),
                    "generation_s": round(generation, 2),
                    "retrieval_share": round(retrieval / wall, 3),
                    "generation_share": round(generation / wall, 3),
                    "completion_tokens": int(df["completion_tokens"].sum()),
                }
            )
    table = pl.DataFrame(rows)
    with pl.Config(tbl_rows=-1, tbl_cols=-1, tbl_width_chars=200):
        print(table)
    total = time.perf_counter() - t_all
    cpu = time.process_time() - cpu_all
    n = len(rows) * qa.height
    print(
        f"all systems, actual wall (shared retrieval counted once): {n} answers in {total:.1f} s "
        f"= {n / total * 60:.1f} answers/min; retrieval {spent['retrieval'] / total:.1%}, "
        f"generation {spent['generation'] / total:.1%} of wall time"
    )
    print(
        f"process CPU time {cpu:.1f} s ({cpu / max(n, 1):.1f} CPU-s per answer; on an idle "
        f"machine wall time is about CPU time / threads used); load average at end "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
    )
