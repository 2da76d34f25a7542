"""The generated-question pool (``python -m benchmarks answer_first pool`` / ``pool-report``):
each question's verdicts are the generator's own round trips read one question at a time; the
report gives each gate's per-question precision and recall, and its yield as the generator
applies it (per attempt the first question in try order the gate keeps, accepted only when the
rule gate keeps it too); an unlabelled pool question or a null label is a one-line error."""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from _llm_testing import Messages, scripted_model

from benchmarks.answer_first import _pool_verdicts, by_chunk_95, pool_id, pool_report
from ragcourt.core.prompts import prompt
from ragcourt.llm import Gateway
from ragcourt.orchestration.params import Params, parse_params
from ragcourt.qagen.answer_first import AnswerFirstGenerator, span_contexts
from ragcourt.qagen.generator import Candidate

PROMPTS = Path(__file__).resolve().parents[3] / "configs" / "prompts"
WRITER = prompt("qagen", "answer_first_question_system", "v1", PROMPTS)

CONTEXT = "The harbour office of Valparaiso was opened in 1832 by Manuel Ortega."


def _q(attempt: int, tr: int, text: str, gate: bool, reader: bool, llm: bool, p: float) -> dict:
    return {
        "id": pool_id(text, "x", CONTEXT), "attempt": attempt, "try": tr, "question": text,
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
        {"id": pool_id(q, "x", CONTEXT), "labeller": "test", "standalone": g, "answerable": g,
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


WRITTEN = {  # span -> the scripted writer's question; the scripted reader answers the first two
    "Valparaiso": "In which city was a harbour office opened in 1832?",
    "1832": "When was the harbour office opened?",
    "Manuel Ortega": "Who opened the harbour office?",
}


def _reply(msgs: Messages) -> str:
    text = msgs[-1]["content"]
    if msgs[0]["content"] == WRITER:
        m = re.search(r"^Answer: (.+)$", text, re.M)
        assert m is not None
        return WRITTEN[m.group(1)]
    q = re.search(r"^Question: (.+)$", text, re.M)
    assert q is not None
    span = next(s for s, asked in WRITTEN.items() if asked == q.group(1))
    return "Answer: the green ledger." if span == "Manuel Ortega" else f"Answer: {span}."


def _gen_params(tmp: Path, model: str, round_trip: str) -> Params:
    return parse_params({
        "llm": {"model": model, "cache_dir": str(tmp / "cache"), "max_retries": 0,
                "metrics_dir": str(tmp / "metrics")},
        "qagen": {"reference_chunking": "c256", "method": "answer_first", "n_items": 10,
                  "max_attempts": 10, "question_model": None, "answer_model": None,
                  "prompt_version": "v1", "filter_prompt_version": "v1",
                  "answer_first": {"extractor": "rules", "spans_per_chunk": 3, "writer_tries": 1,
                                   "fill_lower_tiers": True, "round_trip": round_trip}},
    })  # fmt: skip


def test_pool_verdicts_are_the_generators_round_trips_scripted_model(tmp_path: Path) -> None:
    contexts = pl.DataFrame(
        {"source_chunk_id": ["c0"], "doc_id": ["d0"], "char_start": [0],
         "char_end": [len(CONTEXT)], "context": [CONTEXT]}
    )  # fmt: skip
    with scripted_model("af-pool", _reply) as m:
        gens = {
            mode: AnswerFirstGenerator(
                Gateway(_gen_params(tmp_path, m.model, mode).llm, stage="qagen"),
                _gen_params(tmp_path, m.model, mode),
                prompts_dir=PROMPTS,
            )
            for mode in ("llm", "reader")
        }
        frame = span_contexts(contexts, gens["llm"].q).frame
        cands = [Candidate(i, **r) for i, r in enumerate(frame.to_dicts())]
        gens["llm"].write_questions(cands)
        asked = [(c, q) for c in cands if c.alive for q in c.passing_questions]
        verdicts = _pool_verdicts(gens["llm"], asked)
        own = {}
        for mode, gen in gens.items():  # each mode's own round trip, on fresh copies
            copies = [dataclasses.replace(c, outcomes={}) for c in cands]
            gen.read_back(copies)
            own[mode] = [c.alive for c in copies]
    assert [c.answer for c, _ in asked] == list(WRITTEN)
    assert [v["llm_ok"] for v in verdicts] == own["llm"] == [True, True, False]
    assert [v["llm_phrase"] for v in verdicts] == ["Valparaiso", "1832", "the green ledger"]
    assert [v["reader_ok"] for v in verdicts] == own["reader"]
    assert all(0 <= v["reader_p"] <= 1 for v in verdicts)
    assert all(v["rule_gate"] for v in verdicts)


def test_chunk_bootstrap_resamples_whole_chunks() -> None:
    rows = [{"context": c, "good": g} for c, g in (("a", 1), ("a", 1), ("b", 0), ("b", 0))]
    # every draw is aa (1), bb (0) or a mix (1/2): the interval spans both chunks' shares
    assert by_chunk_95(rows, lambda r: r["good"] == 1) == [0.0, 1.0]
    one = [r for r in rows if r["context"] == "a"] + [{"context": "a", "good": 0}]
    assert by_chunk_95(one, lambda r: r["good"] == 1) == [0.667, 0.667]  # one chunk: no spread
    assert by_chunk_95([], lambda r: True) is None
