"""QA quality gate: precision of accepted QA items before/after the rule filters.

Two steps:

1. ``generate``: in a project folder (a throw-away copy whose ingest and chunk stages ran;
   run it with that folder as cwd so its code and reply cache are used) draw
   ``qagen.max_attempts`` contexts exactly as the qagen stage does and run the stage's
   :class:`~ragcourt.qagen.generator.Generator` over them in rounds of ``--round`` candidates,
   appending every candidate (question, answer, context, the generator's verdict) to
   ``--out`` after each round, so a long run can be stopped and keeps what it has. Duplicate
   removal is not run (it is the same before and after).
2. ``score``: read those candidates and hand labels (``benchmarks/data/qa_gate_labels.jsonl``:
   candidate_id, question, answer, label good|bad, note), apply the rule filters of
   :mod:`ragcourt.qagen.quality` (the gate) and print: precision of the items the LLM filters
   accepted (before), precision of those the gate also passes (after), good items the gate
   lost, and each gate rejection with its filter and reason.

    cd /tmp/copy && python -m benchmarks qa_gate generate --out /tmp/cands.jsonl
    python -m benchmarks qa_gate score --candidates benchmarks/data/qa_gate_candidates.jsonl
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks._common import DATA

LABELS = DATA / "qa_gate_labels.jsonl"


def generate(out: Path, round_size: int) -> None:
    from ragcourt.core import catalog
    from ragcourt.core.io import read_table
    from ragcourt.llm import Gateway
    from ragcourt.orchestration.params import load_params
    from ragcourt.qagen.contexts import qagen_contexts
    from ragcourt.qagen.generator import Candidate, Generator

    params = load_params("params.yaml")
    q = params.qagen
    docs = read_table(catalog.path("documents"), "documents")
    chunks = read_table(catalog.path("chunks", chunking=q.reference_chunking), "chunks")
    contexts = qagen_contexts(chunks, docs, q)
    rows = contexts.to_dicts()
    gen = Generator(Gateway(params.llm, stage="qagen"), params)
    done = set()
    if out.is_file():
        done = {json.loads(line)["attempt_index"] for line in out.read_text("utf-8").splitlines()}
    for start in range(0, len(rows), round_size):
        idx = [i for i in range(start, min(start + round_size, len(rows))) if i not in done]
        if not idx:
            continue
        batch = [Candidate(i, **rows[i]) for i in idx]
        gen.run_round(batch)
        with out.open("a", encoding="utf-8") as f:
            for c in batch:
                rec = {
                    "candidate_id": c.candidate_id,
                    "attempt_index": c.attempt_index,
                    "doc_id": c.doc_id,
                    "question": c.question,
                    "answer": c.answer,
                    "context": c.context,
                    "accepted_by_llm_filters": c.alive,
                    "failed_filter": c.failed_filter,
                    "reason": c.reason,
                }
                f.write(json.dumps(rec, ensure_ascii=False) + "\n")
        print(f"round {start // round_size + 1}: {len(batch)} candidates written", flush=True)


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def score(candidates: Path, labels: Path) -> None:
    from ragcourt.qagen.quality import gate_rejection

    cands = {c["candidate_id"]: c for c in _read(candidates)}
    labs = {r["candidate_id"]: r for r in _read(labels)}
    with_qa = [c for c in cands.values() if c["question"] and c["answer"]]
    missing = [c["candidate_id"] for c in with_qa if c["candidate_id"] not in labs]
    if missing:
        raise SystemExit(f"{labels}: no label for {len(missing)} candidates, e.g. {missing[:3]}")
    for cid, lab in labs.items():
        c = cands.get(cid)
        if c is None or c["question"] != lab["question"]:
            raise SystemExit(f"{labels}: row {cid}: question does not match the candidates file")
    good = {cid for cid, lab in labs.items() if lab["label"] == "good"}
    before = [c for c in with_qa if c["accepted_by_llm_filters"]]
    verdicts = {
        c["candidate_id"]: gate_rejection(c["question"], c["answer"], c["context"]) for c in with_qa
    }
    after = [c for c in before if verdicts[c["candidate_id"]] is None]

    def prec(items: list[dict[str, Any]]) -> str:
        n_good = sum(c["candidate_id"] in good for c in items)
        return f"{n_good}/{len(items)} = {n_good / len(items):.2f}" if items else "n/a (0 items)"

    print(f"candidates with a question and an answer: {len(with_qa)} (labelled good: {len(good)})")
    print(f"accepted by the LLM filters (before): precision {prec(before)}")
    print(f"accepted by LLM filters + gate (after): precision {prec(after)}")
    lost = [
        c for c in before if verdicts[c["candidate_id"]] is not None and c["candidate_id"] in good
    ]
    print(f"good accepted items the gate rejects: {len(lost)}")
    caught = [c for c in with_qa if verdicts[c["candidate_id"]] is not None]
    bad_caught = sum(c["candidate_id"] not in good for c in caught)
    print(f"gate over all {len(with_qa)} labelled candidates: rejects {len(caught)} "
          f"({bad_caught} bad, {len(caught) - bad_caught} good)")  # fmt: skip
    for c in caught:
        v = verdicts[c["candidate_id"]]
        assert v is not None
        tag = "good" if c["candidate_id"] in good else "bad "
        print(f"  [{tag}] {v.filter}: {v.reason} | {c['question'][:90]!r}")


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("generate")
    g.add_argument("--out", type=Path, required=True)
    g.add_argument("--round", type=int, default=8)
    s = sub.add_parser("score")
    s.add_argument("--candidates", type=Path, default=DATA / "qa_gate_candidates.jsonl")
    s.add_argument("--labels", type=Path, default=LABELS)
    args = ap.parse_args(argv)
    from ragcourt.core import offline
    from ragcourt.core.entry import setup_logging

    offline.apply()
    setup_logging()
    if args.cmd == "generate":
        generate(args.out, args.round)
    else:
        score(args.candidates, args.labels)
