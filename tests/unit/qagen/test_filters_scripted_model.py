"""QA generation with a scripted model (exact control of every reply): each filter rejects
what it should, the budget stops, nothing generated is lost, a re-run makes no model calls.

Each context carries a marker word; the script's reply depends on the role (recognised by its
system prompt) and on that marker. Near duplicates use the real MiniLM embedder.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import yaml
from _llm_testing import ScriptedModel, scripted_model

from ragcourt.core.io import read_table, write_parquet
from ragcourt.core.prompts import prompt
from ragcourt.core.schemas import check, frame_schema
from ragcourt.llm import Gateway
from ragcourt.orchestration.params import Params, parse_params
from ragcourt.qagen.contexts import load_few_shot
from ragcourt.qagen.generator import Generator
from ragcourt.qagen.stage import generate_qa, near_duplicate_encoder
from ragcourt.qagen.stage import run as run_qagen
from ragcourt.retrieval.embedders import encode

ROOT = Path(__file__).resolve().parents[3]
PROMPTS = ROOT / "configs" / "prompts"
SYSTEMS = {
    role: prompt("qagen", f"{role}_system", "v1", PROMPTS) for role in ("question", "answer")
} | {  # the filters' v1 (JSON) prompts: the default qagen.filter_prompt_version
    role: prompt("qagen_filters", f"{role}_system", "v1", PROMPTS)
    for role in ("answerability", "faithfulness", "relevance")
}
BASE_Q = "What does the ledger of the harbour office record?"
NEAR_Q = "What is recorded in the ledger of the harbour office?"
MARKERS = re.compile(
    r"\b(GOOD\d|UNANSWERABLE|UNFAITHFUL|IRRELEVANT|DUPLICATE|NEARDUP|BADJSON|NOQUESTION|CRASH"
    r"|ANSWERFAIL|VAGUE)\b"
)


def _marker(msgs: list[dict[str, str]]) -> str:
    m = MARKERS.search(msgs[-1]["content"]) or MARKERS.search(msgs[1]["content"])
    assert m is not None, msgs
    return m.group(1)


def reply(msgs: list[dict[str, str]]) -> str:
    """The scripted model: role from the system prompt, behaviour from the context marker."""
    role = next(r for r, s in SYSTEMS.items() if msgs[0]["content"] == s)
    mark = _marker(msgs)
    if role == "question":
        if mark == "CRASH":
            raise RuntimeError("provider exploded")
        if mark == "NOQUESTION":
            return "   "
        if mark in ("GOOD1", "DUPLICATE"):
            return f"Question: {BASE_Q}"
        if mark == "NEARDUP":
            return NEAR_Q
        if mark == "VAGUE":
            return "What is the main idea of the passage?"
        return f"What happened to the {mark.lower()} cargo in the port of Valparaiso?"
    if role == "answer":
        return "" if mark == "ANSWERFAIL" else f"Answer: It records the {mark} shipment."
    score = {
        ("answerability", "UNANSWERABLE"): 0,
        ("faithfulness", "UNFAITHFUL"): 0.5,
        ("relevance", "IRRELEVANT"): 0.3,
    }.get((role, mark), 1)
    if role == "answerability" and mark == "BADJSON":
        return "I think it can be answered."  # no JSON at all: a parse failure
    return json.dumps({"reason": f"{role} verdict for {mark}", "score": score})


def _contexts(marks: list[str]) -> pl.DataFrame:
    rows = []
    for i, m in enumerate(marks):
        text = f"Entry {i}: the {m} shipment was logged by the harbour office in 1850."
        rows.append((f"chunk-{i}", f"doc-{i % 3}", 0, len(text), text))
    schema = ["source_chunk_id", "doc_id", "char_start", "char_end", "context"]
    return pl.DataFrame(rows, schema=schema, orient="row")


def _params(tmp: Path, model: str, **qagen: object) -> Params:
    data = {
        "llm": {"model": model, "cache_dir": str(tmp / "cache"), "max_retries": 0,
                "parse_retries": 1, "metrics_dir": str(tmp / "metrics")},
        # the agents method with its v1 prompts and prompted filters (not params.yaml's)
        "qagen": {"reference_chunking": "c256", "batch_size": 4,
                  "method": "agents", "question_model": None, "answer_model": None,
                  "prompt_version": "v1", "filter_prompt_version": "v1",
                  "filter_kinds": {"answerability": "answerability"},
                  "thresholds": {"answerability": 0.5, "faithfulness": 0.9, "relevance": 0.9},
                  **qagen},
    }  # fmt: skip
    return parse_params(data)


@pytest.fixture
def scripted() -> Iterator[ScriptedModel]:
    with scripted_model("qagen", reply) as m:
        yield m


def _generate(
    params: Params, marks: list[str]
) -> tuple[pl.DataFrame, pl.DataFrame, dict[str, Any]]:
    gen = Generator(Gateway(params.llm, stage="qagen"), params, prompts_dir=PROMPTS)
    res = generate_qa(_contexts(marks), gen, near_duplicate_encoder(params))
    check(res.qa, "qa", "<qa>")
    check(res.rejected, "qa_rejected", "<qa_rejected>")
    return res.qa, res.rejected, res.summary.model_dump(mode="json")


def test_each_filter_rejects_what_it_should_scripted_model(
    tmp_path: Path, scripted: ScriptedModel
) -> None:
    near = encode("all-minilm-l6-v2", [BASE_Q, NEAR_Q])
    assert float(near[0] @ near[1]) >= 0.9  # precondition: the paraphrase is a near duplicate
    marks = ["GOOD1", "UNANSWERABLE", "UNFAITHFUL", "IRRELEVANT", "DUPLICATE", "NEARDUP",
             "BADJSON", "NOQUESTION", "CRASH", "ANSWERFAIL", "VAGUE", "GOOD2"]  # fmt: skip
    params = _params(tmp_path, scripted.model, n_items=10, max_attempts=20)
    qa, rejected, summary = _generate(params, marks)

    good2 = "What happened to the good2 cargo in the port of Valparaiso?"
    assert qa["question"].to_list() == [BASE_Q, good2]
    assert qa["reference_answers"].to_list()[0] == ["It records the GOOD1 shipment."]
    assert qa["answerability_score"].to_list() == [1.0, 1.0]
    assert qa["faithfulness_reason"][0] == "faithfulness verdict for GOOD1"
    assert qa["question_model"].unique().to_list() == [scripted.model]
    assert qa["source_chunk_id"].to_list() == ["chunk-0", "chunk-11"]

    got = dict(zip(rejected["source_chunk_id"], rejected["failed_filter"], strict=True))
    assert got == {
        "chunk-1": "answerability",
        "chunk-2": "faithfulness",
        "chunk-3": "relevance",
        "chunk-4": "exact_duplicate",
        "chunk-5": "near_duplicate",
        "chunk-6": "answerability_error",
        "chunk-7": "question_generation_error",
        "chunk-8": "question_generation_error",
        "chunk-9": "answer_generation_error",
        "chunk-10": "question_not_standalone",
    }
    by = {r["source_chunk_id"]: r for r in rejected.iter_rows(named=True)}
    assert by["chunk-2"]["reason"] == "score 0.5 < 0.9: faithfulness verdict for UNFAITHFUL"
    assert by["chunk-2"]["answerability_score"] == 1.0
    assert by["chunk-2"]["relevance_score"] is None  # short-circuit: judging stopped
    assert by["chunk-4"]["duplicate_of"] == qa["question_id"][0]
    assert by["chunk-5"]["duplicate_of"] == qa["question_id"][0]
    assert by["chunk-5"]["reason"].startswith("cosine similarity 0.9")
    assert by["chunk-6"]["raw_output"] == "I think it can be answered."
    assert "not parsable" in by["chunk-6"]["reason"]
    assert "provider exploded" in by["chunk-8"]["reason"]
    assert by["chunk-9"]["question"] is not None and by["chunk-9"]["answer"] is None
    assert by["chunk-10"]["reason"].startswith("refers to 'the passage'")
    assert by["chunk-10"]["answer"] is None  # rejected before the expert and the judges ran

    # nothing generated is lost: every attempt is in exactly one table
    ids = qa["candidate_id"].to_list() + rejected["candidate_id"].to_list()
    assert sorted(ids) == [f"cand-{i:05d}" for i in range(len(marks))]
    assert summary["attempts"] == len(marks) and summary["accepted"] == 2
    assert summary["stop_reason"] == "contexts_exhausted"
    assert summary["rejections"]["question_generation_error"] == 2
    assert summary["judge_errors"]["answerability"] == 1


@pytest.mark.parametrize("short_circuit", [True, False])
def test_short_circuit_skips_later_judges_only_when_set_scripted_model(
    tmp_path: Path, scripted: ScriptedModel, short_circuit: bool
) -> None:
    params = _params(tmp_path, scripted.model, n_items=5, max_attempts=5,
                     short_circuit=short_circuit)  # fmt: skip
    _, rejected, summary = _generate(params, ["UNANSWERABLE", "UNFAITHFUL", "GOOD1"])
    assert rejected["failed_filter"].to_list() == ["answerability", "faithfulness"]
    row = rejected.row(0, named=True)
    assert row["answerability_score"] == 0.0
    assert (row["faithfulness_score"] is None) == short_circuit
    assert (row["relevance_score"] is None) == short_circuit
    assert summary["judged"] == (
        {"answerability": 3, "faithfulness": 2, "relevance": 1}
        if short_circuit
        else {"answerability": 3, "faithfulness": 3, "relevance": 3}
    )
    assert summary["judge_below_threshold"]["answerability"] == 1


def test_budget_stops_at_max_attempts_scripted_model(
    tmp_path: Path, scripted: ScriptedModel
) -> None:
    params = _params(tmp_path, scripted.model, n_items=5, max_attempts=7)
    qa, rejected, summary = _generate(params, ["UNANSWERABLE"] * 30)
    assert qa.is_empty() and rejected.height == 7
    assert summary["stop_reason"] == "max_attempts_reached"
    assert summary["attempts"] == 7 and summary["acceptance_rate"] == 0.0
    assert summary["rejections"] == {"answerability": 7}


def test_stops_at_n_items_and_records_over_quota_scripted_model(
    tmp_path: Path, scripted: ScriptedModel
) -> None:
    # round 1 (2 candidates): one rejected -> rate 0.5 -> round 2 asks 2 for the 1 missing,
    # both pass: the second is kept as 'over_quota', not silently dropped
    params = _params(tmp_path, scripted.model, n_items=2, max_attempts=20)
    qa, rejected, summary = _generate(params, ["GOOD1", "UNANSWERABLE", "GOOD2", "GOOD3", "GOOD4"])
    assert qa.height == 2 and summary["stop_reason"] == "n_items_reached"
    assert summary["attempts"] == 4
    assert rejected["failed_filter"].to_list() == ["answerability", "over_quota"]


# summary.json of this run as written by the pre-model code (a plain dict), kept verbatim
PINNED_SUMMARY = {
    "acceptance_rate": 0.2, "accepted": 2, "attempts": 10, "contexts_available": 10,
    "documents_covered": 1,
    "judge_below_threshold": {"answerability": 1, "faithfulness": 1, "relevance": 1},
    "judge_errors": {"answerability": 1, "faithfulness": 0, "relevance": 0},
    "judge_mean_score": {"answerability": 0.8333333333333334, "faithfulness": 0.9,
                         "relevance": 0.825},
    "judged": {"answerability": 7, "faithfulness": 5, "relevance": 4},
    "max_attempts": 20,
    "models": {"answer": "scripted/qagen", "filter": "scripted/qagen",
               "question": "scripted/qagen"},
    "prompt_version": "v1", "reference_chunking": "c256",
    "rejections": {"answer_generation_error": 1, "answerability": 1, "answerability_error": 1,
                   "exact_duplicate": 1, "faithfulness": 1, "question_generation_error": 1,
                   "question_not_standalone": 1, "relevance": 1},
    "requested": 3, "seed": 13, "stop_reason": "contexts_exhausted",
    "thresholds": {"answerability": 1.0, "faithfulness": 0.9, "relevance": 0.9},
    "method": "agents", "answer_types": {},
}  # fmt: skip


def test_summary_keeps_its_keys_and_values_scripted_model(
    tmp_path: Path, scripted: ScriptedModel
) -> None:
    marks = ["GOOD1", "UNANSWERABLE", "UNFAITHFUL", "IRRELEVANT", "DUPLICATE", "BADJSON",
             "NOQUESTION", "ANSWERFAIL", "VAGUE", "GOOD2"]  # fmt: skip
    params = _params(tmp_path, scripted.model, n_items=3, max_attempts=20)
    _, _, summary = _generate(params, marks)
    # the filter prompt version and the form counts are recorded, and answerability's
    # threshold a parameter (0.5: the same pass/fail on the v1 0/1 scores as the fixed 1.0)
    added = {
        "filter_prompt_version": "v1",
        "judge_forms": {"answerability": {"generated": 7}, "faithfulness": {"generated": 5},
                        "relevance": {"generated": 4}},
        "thresholds": {"answerability": 0.5, "faithfulness": 0.9, "relevance": 0.9},
    }  # fmt: skip
    assert summary == PINNED_SUMMARY | added


def _project(tmp: Path, model: str) -> None:
    texts = [
        "The GOOD1 shipment of tea reached the harbour office in the spring of 1850. " * 3,
        "The UNANSWERABLE ledger was lost. The GOOD2 crates of iron were weighed twice. " * 3,
    ]
    docs, chunks = [], []
    for d, text in enumerate(texts):
        docs.append((f"doc{d}", f"d{d}.txt", f"D{d}", "txt", text, len(text), None, "en", 1.0))
        half = len(text) // 2
        for j, (s, e) in enumerate([(0, half), (half, len(text))]):
            chunks.append((f"c256-doc{d}-{j}", "c256", f"doc{d}", j, s, e, 60, text[s:e]))
    write_parquet(
        pl.DataFrame(docs, schema=frame_schema("documents"), orient="row"),
        tmp / "data/documents.parquet",
        "documents",
    )
    write_parquet(
        pl.DataFrame(chunks, schema=frame_schema("chunks"), orient="row"),
        tmp / "data/chunks/c256.parquet",
        "chunks",
    )
    params = {
        "chunkings": {"c256": {"size": 256, "overlap": 32}},
        "llm": {"model": model, "max_retries": 0, "parse_retries": 0},
        "qagen": {"reference_chunking": "c256", "n_items": 3, "max_attempts": 4,
                  "min_context_tokens": 10,
                  "method": "agents", "question_model": None, "answer_model": None,
                  "prompt_version": "v1", "filter_prompt_version": "v1",
                  "filter_kinds": {"answerability": "answerability"},
                  "thresholds": {"answerability": 0.5, "faithfulness": 0.9, "relevance": 0.9},},
    }  # fmt: skip
    (tmp / "params.yaml").write_text(yaml.safe_dump(params), encoding="utf-8")


def test_stage_spans_are_verbatim_and_rerun_makes_no_calls_scripted_model(
    tmp_path: Path, scripted: ScriptedModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    _project(tmp_path, scripted.model)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "configs").symlink_to(ROOT / "configs", target_is_directory=True)
    params = parse_params(yaml.safe_load((tmp_path / "params.yaml").read_text()))
    run_qagen(params)
    calls = len(scripted.calls)
    assert calls > 0
    qa = read_table("data/qa/qa.parquet", "qa")
    rejected = read_table("data/qa/qa_rejected.parquet", "qa_rejected")
    docs = read_table("data/documents.parquet", "documents")
    texts = dict(zip(docs["doc_id"], docs["text"], strict=True))
    assert qa.height >= 1
    for r in qa.iter_rows(named=True):
        assert texts[r["doc_id"]][r["char_start"] : r["char_end"]] == r["context"]
    summary = Path("data/qa/summary.json").read_text()
    assert qa.height + rejected.height == json.loads(summary)["attempts"]
    assert Path("data/metrics/llm_qagen.json").is_file()

    run_qagen(params)  # same params, same inputs: every reply comes from the cache
    assert len(scripted.calls) == calls
    assert read_table("data/qa/qa.parquet", "qa").equals(qa)
    assert read_table("data/qa/qa_rejected.parquet", "qa_rejected").equals(rejected)
    assert Path("data/qa/summary.json").read_text() == summary


def test_few_shot_examples_reach_the_question_prompt_scripted_model(
    tmp_path: Path, scripted: ScriptedModel
) -> None:
    shots = tmp_path / "shots.txt"
    shots.write_text("# user questions\nWhich ports closed in 1850?\nWho paid the duty?\n"
                     "How heavy were the crates?\n")  # fmt: skip
    params = _params(tmp_path, scripted.model, n_items=2, max_attempts=2, few_shot_k=2)
    params.qagen.few_shot_file = str(shots)
    examples = load_few_shot(shots)
    gen = Generator(Gateway(params.llm, stage="qagen"), params, examples, prompts_dir=PROMPTS)
    generate_qa(_contexts(["GOOD1", "GOOD2"]), gen, near_duplicate_encoder(params))
    qsys = SYSTEMS["question"]
    question_prompts = [c[1]["content"] for c in scripted.calls if c[0]["content"] == qsys]
    assert len(question_prompts) == 2
    for p in question_prompts:
        shown = [q for q in examples if f"- {q}" in p]
        assert len(shown) == 2  # few_shot_k of the three, seeded per attempt
        assert p.index("Questions real users asked") < p.index("Text:")
