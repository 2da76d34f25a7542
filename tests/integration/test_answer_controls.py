"""Control systems in the answer stage: oracle context holds the span, random is
seeded and reproducible, closed book sends no passage, shuffled never answers its own
question. Real chunks / QA parquet, the real gateway with a scripted generator."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import yaml
from _llm_testing import scripted_model
from integration.test_answer_stage import QUESTIONS, answer_project, generator

from ragcourt.answering import stage as answer
from ragcourt.answering.control_retrieval import random_hits
from ragcourt.answering.controls import param_controls
from ragcourt.answering.shuffled import ONE_QUESTION, derangement, shuffled_answers
from ragcourt.answering.systems import load_systems
from ragcourt.core.control_kinds import controls_of, known_pairs
from ragcourt.core.errors import ConfigError
from ragcourt.core.io import read_table
from ragcourt.core.prompts import prompt
from ragcourt.orchestration.params import Params
from ragcourt.retrieval.span_relevance import overlap

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Params:
    monkeypatch.chdir(tmp_path)
    return answer_project(tmp_path)  # no control systems: a test adds them explicitly


def _systems(*specs: dict[str, Any]) -> None:
    Path("systems.yaml").write_text(
        yaml.safe_dump({"defaults": {"chunking": "c256", "embedder": "minilm"}, "systems": specs})
    )


def _answers() -> pl.DataFrame:
    return read_table("data/answers/answers.parquet", "answers")


def test_param_controls_are_added_and_marked_scripted_model(project: Params) -> None:
    _systems({"name": "bm25-k2", "retriever": "bm25", "top_k": 2})
    project.controls.kinds = ["oracle", "random", "none", "shuffled"]
    with scripted_model("gen-ctl", generator) as m:
        project.llm.model = m.model
        answer.run(project)
    out = _answers()
    assert controls_of(out) == {
        "control-oracle": "oracle",
        "control-random": "random",
        "control-none": "none",
        "control-shuffled": "shuffled",
    }
    assert out.filter(pl.col("system") == "bm25-k2")["control"].null_count() == 3
    # oracle passages hold the answer, so the scripted generator never abstains there
    oracle = out.filter(pl.col("system") == "control-oracle")
    assert oracle["error"].null_count() == 3 and not any(oracle["abstained"])
    pairs = known_pairs(sorted(controls_of(out) | {"bm25-k2": ""}), controls_of(out))
    assert ("control-oracle", "control-random") in pairs
    assert ("bm25-k2", "control-shuffled") in pairs
    assert all(bad != "control-shuffled" or good != bad for good, bad in pairs)


def test_oracle_context_holds_the_span_scripted_model(project: Params) -> None:
    _systems({"name": "oracle-k1", "retriever": "oracle", "top_k": 1})
    with scripted_model("gen-or", generator) as m:
        project.llm.model = m.model
        answer.run(project)
    qa = read_table("data/qa/qa.parquet", "qa")
    spans = {r["question_id"]: r for r in qa.iter_rows(named=True)}
    out = _answers()
    assert out.height == 3 and out["error"].null_count() == 3
    for row in out.iter_rows(named=True):
        q = spans[row["question_id"]]
        (hit,) = row["retrieved"]  # top_k 1: the chunk with the largest overlap
        assert hit["doc_id"] == q["doc_id"]
        assert overlap(hit["char_start"], hit["char_end"], q["char_start"], q["char_end"]) > 0
        # the passage sent to the generator is that chunk's text
        assert row["answer"] != "NO-RESPONSE"


def test_oracle_without_overlapping_chunk_is_an_error_row_scripted_model(
    project: Params,
) -> None:
    qa = read_table("data/qa/qa.parquet", "qa").with_columns(
        pl.when(pl.col("question_id") == "q2")
        .then(pl.lit("no-such-doc"))
        .otherwise(pl.col("doc_id"))
        .alias("doc_id")
    )
    qa.write_parquet("data/qa/qa.parquet")
    _systems({"name": "oracle-k2", "retriever": "oracle", "top_k": 2})
    with scripted_model("gen-or2", generator) as m:
        project.llm.model = m.model
        answer.run(project)
        assert len(m.calls) == 2  # q2 is not asked closed book
    row = _answers().filter(pl.col("question_id") == "q2").row(0, named=True)
    assert row["answer"] is None and "no chunk of document 'no-such-doc'" in row["error"]


def test_random_is_seeded_reproducible_and_differs_across_questions() -> None:
    chunks = pl.DataFrame(
        {
            "chunk_id": [f"c{i:02d}" for i in range(40)],
            "doc_id": ["d"] * 40,
            "char_start": list(range(0, 400, 10)),
            "char_end": list(range(10, 410, 10)),
            "text": [f"t{i}" for i in range(40)],
        }
    )
    qa = pl.DataFrame({"question_id": [f"q{i}" for i in range(6)]})
    one = random_hits(qa, chunks, 3, seed=7)
    again = random_hits(qa, chunks.reverse(), 3, seed=7)  # row order of the chunks is irrelevant
    assert one.equals(again)
    per_q = one.group_by("query_id", maintain_order=True).agg("chunk_id")["chunk_id"].to_list()
    assert len(per_q) == qa.height and all(len(set(ids)) == 3 for ids in per_q)
    assert len({tuple(ids) for ids in per_q}) == 6  # different draws per question
    assert not random_hits(qa, chunks, 3, seed=8).equals(one)


def test_random_is_the_same_in_another_process() -> None:
    code = (
        "import polars as pl; from ragcourt.answering.control_retrieval import random_hits;"
        "c = pl.DataFrame({'chunk_id': [f'c{i}' for i in range(30)], 'doc_id': ['d']*30,"
        "'char_start': list(range(30)), 'char_end': list(range(1, 31)), 'text': ['x']*30});"
        "q = pl.DataFrame({'question_id': ['a', 'b']});"
        "print(random_hits(q, c, 4, 3)['chunk_id'].to_list())"
    )
    runs = [
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
        ).stdout
        for _ in range(2)
    ]
    assert runs[0] == runs[1] and runs[0].count("'c") == 8


def test_closed_book_sends_no_passages_scripted_model(project: Params) -> None:
    _systems({"name": "closed", "retriever": "none", "top_k": 3})
    with scripted_model("gen-none", generator) as m:
        project.llm.model = m.model
        answer.run(project)
        users = [msgs[-1]["content"] for msgs in m.calls]
    chunks = read_table("data/chunks/c256.parquet", "chunks")
    assert len(users) == 3
    none_text = prompt("answer", "no_passages", "v1")
    for user in users:
        assert none_text in user
        assert not any(text in user for text in chunks["text"].to_list())
    out = _answers()
    assert out["retrieved"].list.len().sum() == 0 and all(out["abstained"])


def test_shuffled_never_returns_the_own_answer_scripted_model(project: Params) -> None:
    _systems(
        {"name": "bm25-k3", "retriever": "bm25", "top_k": 3},
        {"name": "shuf", "answers": "shuffled", "base": "bm25-k3"},
    )
    with scripted_model("gen-shuf", generator) as m:
        project.llm.model = m.model
        answer.run(project)
        assert len(m.calls) == 3  # the shuffled control calls no model
    out = _answers()
    base = dict(out.filter(pl.col("system") == "bm25-k3").select("question_id", "answer").rows())
    shuf = dict(out.filter(pl.col("system") == "shuf").select("question_id", "answer").rows())
    assert sorted(shuf.values()) == sorted(base.values())
    for qid, _, _ in QUESTIONS:
        assert shuf[qid] != base[qid]  # base answers differ per question: never its own
    for n in range(2, 30):
        for seed in range(5):
            perm = derangement(n, seed, "s")
            assert sorted(perm) == list(range(n)) and all(p != i for i, p in enumerate(perm))
    assert derangement(10, 1, "s") == derangement(10, 1, "s") != derangement(10, 2, "s")


def test_shuffled_with_one_question_is_an_error_row() -> None:
    base = pl.DataFrame(
        {"question_id": ["q1"], "answer": ["x"], "abstained": [False], "retrieved": [[]],
         "query_variants": [[]], "model": ["m"], "error": [None]},
        schema_overrides={"error": pl.String},
    )  # fmt: skip
    qa = pl.DataFrame({"question_id": ["q1"]})
    out = shuffled_answers("shuf", "base", base, qa, 0)
    assert out["answer"].to_list() == [None] and out["error"].to_list() == [ONE_QUESTION]


def test_control_config_errors_name_the_key(project: Params) -> None:
    _systems({"name": "shuf", "answers": "shuffled", "base": "later"})
    with pytest.raises(ConfigError, match="key 'base': 'later' is not a system declared"):
        load_systems(project, check_models=False)
    _systems({"name": "o", "retriever": "oracle", "fusion": True})
    with pytest.raises(ConfigError, match="takes no fusion"):
        load_systems(project, check_models=False)
    _systems({"name": "b", "retriever": "bm25"})
    project.controls.kinds = ["oracle"]
    project.controls.base = "nope"
    with pytest.raises(ConfigError, match=r"key 'controls\.base': 'nope'"):
        load_systems(project, check_models=False)


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The WARNING messages of the answering logger."""
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "ragcourt.answering" and r.levelno == logging.WARNING
    ]


def test_no_builtin_base_gives_no_controls_and_a_warning(
    project: Params, caplog: pytest.LogCaptureFixture
) -> None:
    """``controls.base: null`` with only external systems: nothing to build the controls on, so
    none is added (a warning says why) instead of a config error."""
    specs: list[dict[str, Any]] = [
        {"name": "team-b", "kind": "answers_file", "path": "answers/team-b.jsonl"},
    ]
    _systems(*specs)
    project.controls.kinds = ["oracle", "random", "shuffled"]
    project.controls.base = None
    with caplog.at_level(logging.WARNING, logger="ragcourt.answering"):
        systems = load_systems(project, check_models=False)
        assert param_controls(systems, project, "systems.yaml") == []
    assert [s.name for s in systems] == ["team-b"]
    assert len(_warnings(caplog)) == 2  # once per call
    message = _warnings(caplog)[0]
    assert message.startswith("systems.yaml: no built-in system to build the controls")
    assert "['oracle', 'random', 'shuffled']" in message and "controls.base is null" in message
    # with a built-in system beside it, the controls are built on that one, without a warning
    caplog.clear()
    _systems({"name": "bm25-k2", "retriever": "bm25", "top_k": 2}, *specs)
    with caplog.at_level(logging.WARNING, logger="ragcourt.answering"):
        names = [s.name for s in load_systems(project, check_models=False)]
    assert names == ["bm25-k2", "team-b", "control-oracle", "control-random", "control-shuffled"]
    assert _warnings(caplog) == []
