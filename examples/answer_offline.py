"""Route 1, ``kind: answers_file``: answer an exported question file offline.

A team whose system runs elsewhere gets the questions, answers them, and hands back a file:

    ragcourt questions export --out questions.jsonl
    python -m examples.answer_offline questions.jsonl answers.jsonl     # your system here
    ragcourt answers import answers.jsonl --system team-b

This script stands in for "your system" with the extractive baseline of
:mod:`examples.extractive`; each output line is
``{"question_id", "answer", "contexts": [{"text", "doc_id", "score"}], "latency_s"}``.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from examples.extractive import shared


def answer_file(questions: Path, answers: Path) -> int:
    """Answer every question of a JSONL export; returns the number of answers written."""
    rag = shared()
    lines = []
    for raw in questions.read_text(encoding="utf-8").splitlines():
        if not raw.strip():
            continue
        item = json.loads(raw)
        t0 = time.perf_counter()
        out = rag(item["question"])
        lines.append(
            {
                "question_id": item["question_id"],
                "answer": out["answer"],
                "contexts": [
                    {"text": c["text"], "doc_id": c["doc_id"], "score": c["score"]}
                    for c in out["contexts"]
                ],
                "latency_s": round(time.perf_counter() - t0, 6),
            }
        )
    answers.write_text(
        "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8"
    )
    return len(lines)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python -m examples.answer_offline QUESTIONS.jsonl ANSWERS.jsonl")
    n = answer_file(Path(sys.argv[1]), Path(sys.argv[2]))
    print(f"wrote {n} answers to {sys.argv[2]}")
