"""Every route of examples/ in one answer stage run on the tiny project (real ingest, chunks,
BYO QA set, real BM25): a built-in BM25 system on a scripted model, the plain-function and
LangChain Python systems, the FastAPI service (served by uvicorn) through a custom JSON API and
the openai_chat shortcut, and an answers file made offline from exported questions. The mixed
field then goes through judge, judge_retrieval (a scripted judge model), judge_summary, the
tournament and the report with the default failure policy: the chat shortcut returns no
passages, so its retrieval is not judged, and no stage fails for it."""

from __future__ import annotations

import shutil
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest
import typer
import yaml
from _llm_testing import scripted_model
from _tiny_project import ROOT, make_project
from typer.testing import CliRunner

from ragcourt.answering import stage as answer
from ragcourt.cli.external_cmd import answers_app, questions_app
from ragcourt.core.io import read_table
from ragcourt.orchestration.params import Params, load_params

KEY_VAR = "EXAMPLE_SERVICE_KEY"


def _forget_examples() -> None:
    """The examples cache an index per process; each test project starts clean."""
    for name in [m for m in sys.modules if m == "examples" or m.startswith("examples.")]:
        del sys.modules[name]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Params]:
    ws = make_project(tmp_path / "p", chunkings={"c16": (16, 2)})
    shutil.copytree(
        ROOT / "examples", ws / "examples", ignore=shutil.ignore_patterns("__pycache__")
    )
    monkeypatch.chdir(ws)
    monkeypatch.syspath_prepend(str(ws))
    _forget_examples()
    from ragcourt.corpus import chunking, ingest
    from ragcourt.qagen import stage as qagen

    params = load_params("params.yaml")
    params.controls.kinds = []  # the systems file's own systems, without control systems
    params.llm.cache_dir = str(ws / ".cache")
    ingest.run(params)
    chunking.run(params, "c16")
    qagen.run(params)
    yield params
    _forget_examples()


@pytest.fixture
def service(project: Params, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    import uvicorn

    monkeypatch.setenv(KEY_VAR, "example-key-123")
    from examples.http_service import app

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(10)


def generator(messages: list[dict[str, str]]) -> str:
    return "NO-RESPONSE"


def judge_reply(messages: list[dict[str, str]]) -> str:
    """A written reply for any judge prompt that asks for one (JSON relevance, a label)."""
    return '{"reason": "scripted", "relevance": 2}'


def judge_next_token(messages: list[dict[str, str]]) -> dict[str, float]:
    """First-token probabilities that serve both one-token judges: the relevance grades and
    the first token of NO-RESPONSE (UDCG)."""
    return {"2": 0.5, "1": 0.15, "0": 0.1, "NO": 0.2, "The": 0.05}


def test_examples_answer_beside_a_builtin_system_scripted_model(
    project: Params, service: str, tmp_path: Path
) -> None:
    # Route 1: export the questions, answer them offline, import the answers file
    cli = typer.Typer()
    cli.add_typer(questions_app, name="questions")
    cli.add_typer(answers_app, name="answers")
    runner = CliRunner()
    res = runner.invoke(cli, ["questions", "export", "--out", str(tmp_path / "q.jsonl")])
    assert res.exit_code == 0, res.output
    from examples.answer_offline import answer_file

    assert answer_file(tmp_path / "q.jsonl", tmp_path / "a.jsonl") == 3

    inputs = ["examples/extractive.py", "data/chunks/c16.parquet"]
    example = yaml.safe_load((ROOT / "examples/systems_external.yaml").read_text())
    by_name = {s["name"]: s for s in example["systems"]}
    systems = [
        by_name["bm25-k3"],
        # copies: one shared list would be dumped as an anchor and alias (refused)
        {**by_name["my-function"], "inputs": list(inputs)},
        {**by_name["my-langchain"], "inputs": list(inputs)},
        {**by_name["my-service"], "url": f"{service}/ask"},
        {
            **by_name["my-service-chat"],
            "openai_chat": {
                **by_name["my-service-chat"]["openai_chat"],
                "base_url": f"{service}/v1",
            },
        },
    ]
    Path(project.systems_file).write_text(
        yaml.safe_dump({"defaults": {**example["defaults"], "chunking": "c16"}, "systems": systems})
    )
    res = runner.invoke(cli, ["answers", "import", str(tmp_path / "a.jsonl"), "--system", "team-b"])
    assert res.exit_code == 0, res.output

    with scripted_model("gen", generator) as m:
        project.llm.model = m.model
        answer.run(project)
    out = read_table("data/answers/answers.parquet", "answers")
    names = ["bm25-k3", "my-function", "my-langchain", "my-service", "my-service-chat", "team-b"]
    assert out["system"].unique(maintain_order=True).to_list() == names
    assert out.height == 3 * len(names) and out["error"].null_count() == out.height
    qids = read_table("data/qa/qa.parquet", "qa")["question_id"].to_list()
    assert out.filter(pl.col("system") == "team-b")["question_id"].to_list() == qids

    from examples.extractive import shared

    qa = read_table("data/qa/qa.parquet", "qa")
    expected = [shared()(q)["answer"] for q in qa["question"]]
    assert all(a != "NO-RESPONSE" for a in expected)  # the baseline finds each sentence
    for name in names[1:]:
        assert out.filter(pl.col("system") == name)["answer"].to_list() == expected, name
    with_ctx = out.filter(pl.col("system").is_in(["my-function", "my-langchain", "team-b"]))
    assert (with_ctx["retrieved"].list.len() >= 1).all()
    first = out.filter(pl.col("system") == "my-langchain")["retrieved"][0][0]
    assert first["chunk_id"] == f"ext:my-langchain:{qids[0]}:0" and first["doc_id"] is not None
    assert first["char_start"] is not None  # Document metadata carried the offsets
    # the chat shortcut returns no contexts: "no contexts supplied", not an empty retrieval
    assert out.filter(pl.col("system") == "my-service-chat")["retrieved"].list.len().sum() == 0
    assert set(out.filter(pl.col("system") != "bm25-k3")["model"].str.split(":").list.get(0)) == {
        "external"
    }

    # the mixed field through DAFE, correctness, retrieval judging, the judge summary, the
    # tournament and the report, under the default failure policy (fail_on_system: true)
    import json

    from ragcourt.judging import answers_stage, retrieval_stage, summary
    from ragcourt.judging.params import JudgeSpec
    from ragcourt.judging.retrieval_skips import NO_RETRIEVAL_JUDGING
    from ragcourt.reporting import stage as report_stage
    from ragcourt.tournament import stage as tournament_stage

    assert project.failure.fail_on_system
    project.judge.judges["contains"] = JudgeSpec(kind="containment")
    project.judge.arbitrator = "contains"  # no LLM: the test controls every verdict source
    answers_stage.run(project)
    verdicts = read_table("data/judge/verdicts.parquet", "verdicts")
    assert set(verdicts["system"]) == set(names)
    with scripted_model("judge", judge_reply, judge_next_token) as j:
        project.llm.model = j.model
        retrieval_stage.run(project)  # raised StageFailed for my-service-chat before
    relevance = read_table("data/judge/relevance.parquet", "relevance")
    assert relevance.height > 0  # the passages of the other systems were judged
    assert relevance["error"].null_count() == relevance.height
    udcg = read_table("data/judge/udcg.parquet", "udcg")
    assert set(udcg["system"]) == set(names) - {"my-service-chat"}  # no rows, no error rows
    assert udcg["error"].null_count() == udcg.height and udcg["udcg"].null_count() == 0
    summary.run(project)
    judged = json.loads(Path("data/judge/summary.json").read_text(encoding="utf-8"))
    assert judged["retrieval_not_judged"] == {"my-service-chat": NO_RETRIEVAL_JUDGING}
    tournament_stage.run(project)
    board = read_table("data/tournament/leaderboard.parquet", "leaderboard")
    assert sorted(board["system"].to_list()) == sorted(names)
    _, md = report_stage.run(project)
    report = md.read_text(encoding="utf-8")
    assert f"my-service-chat (no contexts supplied): {NO_RETRIEVAL_JUDGING}" in report
    assert "- **no retrieval judging**: my-service-chat\n" in report
