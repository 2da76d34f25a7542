"""The generated-question pool report (``python -m benchmarks answer_first pool-report``): each
gate's per-question precision and recall, and its yield as the generator applies it (per
attempt the first question in try order the gate keeps, accepted only when the rule gate keeps
it too); an unlabelled pool question or a null label is a one-line error."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.answer_first import pool_id, pool_report

CONTEXT = "The harbour office of Valparaiso was opened in 1832 by Manuel Ortega."


def _q(attempt: int, tr: int, text: str, gate: bool, reader: bool, llm: bool, p: float) -> dict:
    return {
        "id": pool_id(text, CONTEXT), "attempt": attempt, "try": tr, "question": text,
        "reference": "x", "context": CONTEXT, "rule_gate": gate, "reader_p": p,
        "reader_ok": reader, "llm_ok": llm,
    }  # fmt: skip


QUESTIONS = [
    # attempt 0: the LLM keeps try 1 (bad), the reader keeps try 0 (good)
    _q(0, 0, "Who opened the harbour office?", True, True, False, 0.9),
    _q(0, 1, "Who opened it?", True, False, True, 0.3),
    # attempt 1: both gates keep try 0, which the rule gate rejects: not accepted
    _q(1, 0, "What year what year?", False, True, True, 0.95),
    _q(1, 1, "When was the office opened?", True, True, True, 0.92),
    # attempt 2: no gate keeps anything
    _q(2, 0, "Where is the ledger?", True, False, False, 0.1),
]
GOOD = {
    "Who opened the harbour office?": True,
    "Who opened it?": False,
    "When was the office opened?": True,
    "Where is the ledger?": False,
}


def _run(tmp_path: Path, labels: dict[str, Any]) -> dict[str, Any]:
    pool = tmp_path / "pool.json"
    pool.write_text(json.dumps({"source": "demo", "attempts": 4, "questions": QUESTIONS}))
    sheet = tmp_path / "labels.jsonl"
    rows = [
        {"id": pool_id(q, CONTEXT), "labeller": "test", "standalone": g, "answerable": g,
         "reference_correct": True}
        for q, g in labels.items()
    ]  # fmt: skip
    sheet.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return pool_report(argparse.Namespace(pool=[pool], labels=sheet))


def test_gates_as_the_generator_applies_them(tmp_path: Path) -> None:
    out = _run(tmp_path, GOOD)["demo"]
    assert out["attempts"] == 4 and out["pool"] == 4  # the rule gate's reject is not labelled
    assert out["good"]["k"] == 2
    llm, reader, both = out["llm"], out["reader"], out["llm_and_reader"]
    # per labelled question
    assert (llm["kept"], llm["precision"]["k"], llm["recall"]["k"]) == (2, 1, 1)
    assert (reader["kept"], reader["precision"]["k"], reader["recall"]["k"]) == (2, 2, 2)
    assert (both["kept"], both["precision"]["k"]) == (1, 1)
    # as the generator: attempt 1's first kept question fails the rule gate, so it is lost
    assert (llm["yield"]["k"], llm["yield"]["n"]) == (1, 4)
    assert llm["accepted_good"]["k"] == 0  # the LLM kept "Who opened it?"
    assert (reader["yield"]["k"], reader["accepted_good"]["k"]) == (1, 1)
    assert both["yield"]["k"] == 0
    # the reader's P ranks both good questions above both bad ones
    assert out["reader_auc"] == 1.0


def test_unlabelled_or_null_labels_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="1 pool questions unlabelled"):
        _run(tmp_path, {k: v for k, v in GOOD.items() if k != "Who opened it?"})
    sheet = tmp_path / "null.jsonl"
    sheet.write_text(json.dumps({"id": "a", "standalone": None}) + "\n")
    with pytest.raises(SystemExit, match=r"null.jsonl:1: labels \['standalone'"):
        pool_report(argparse.Namespace(pool=[], labels=sheet))
