"""Answers-file and Python systems through the real answer stage (beside a built-in BM25 system
on a scripted model): error rows, one-line file errors, partition freshness, and the
``questions export`` / ``answers import`` commands."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest
import typer
import yaml
from _llm_testing import scripted_model
from typer.testing import CliRunner

from ragcourt.answering import stage as answer
from ragcourt.cli.external_cmd import answers_app, questions_app
from ragcourt.core.errors import SchemaError
from ragcourt.core.io import read_table, write_parquet
from ragcourt.core.schemas import frame_schema
from ragcourt.orchestration.params import Params, load_params

ROOT = Path(__file__).resolve().parents[2]
QA = [
    ("q1", "When was the Louisiana Purchase made?"),
    ("q2", "Where was the transcontinental railroad completed?"),
    ("q3", "Which amendment made the income tax permanent?"),
]
CHUNKS = [
    ("d1", "The Louisiana Purchase doubled the size of the nation in 1803."),
    ("d2", "The transcontinental railroad was completed at Promontory Summit in 1869."),
    ("d3", "The income tax became permanent with the Sixteenth Amendment."),
]
USER_MODULE = """
def answer(question, question_id):
    with open("calls.log", "a") as log:  # the system runs in worker processes
        log.write(question_id + "\\n")
    if question_id == "q2":
        raise ValueError("index unavailable for " + question_id)
    return {"answer": "from python: " + question, "contexts": [{"text": "ctx", "doc_id": "d1"}]}
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Params:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "configs/prompts").mkdir(parents=True)
    for rel in ("configs/prompts/answer.yaml", "configs/models.yaml"):
        (tmp_path / rel).write_bytes((ROOT / rel).read_bytes())
    params = load_params(ROOT / "params.yaml").model_copy(deep=True)
    params.controls.kinds = []  # the systems file's own systems, without control systems
    params.llm.cache_dir = str(tmp_path / ".cache")
    params.llm.max_retries = 0
    params.systems_file = "systems.yaml"
    Path("params.yaml").write_text(yaml.safe_dump(params.model_dump(mode="json")))
    rows = [
        {"chunk_id": f"c256:{d}:0", "chunking": "c256", "doc_id": d, "chunk_index": 0,
         "char_start": 0, "char_end": len(t), "n_tokens": len(t.split()), "text": t}
        for d, t in CHUNKS
    ]  # fmt: skip
    chunks = pl.DataFrame(rows).with_columns(
        pl.col("chunk_index", "n_tokens").cast(pl.Int32),
        pl.col("char_start", "char_end").cast(pl.Int64),
    )
    write_parquet(chunks, "data/chunks/c256.parquet", "chunks")
    qa = pl.DataFrame({"question_id": [q for q, _ in QA], "question": [t for _, t in QA]})
    qa = qa.with_columns(
        pl.lit(None, dtype=t).alias(c) for c, t in frame_schema("qa").items() if c not in qa.columns
    )
    write_parquet(qa, "data/qa/qa.parquet", "qa")
    params.llm.models_file = str(tmp_path / "configs/models.yaml")
    return params


@pytest.fixture
def module(project: Params, tmp_path: Path) -> Iterator[str]:
    """A user module in the project (unique name: modules stay cached in sys.modules)."""
    name = f"user_rag_{abs(hash(tmp_path)) % 10**8}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(USER_MODULE))
    yield name
    sys.modules.pop(name, None)
    if str(tmp_path) in sys.path:
        sys.path.remove(str(tmp_path))


def _write_systems(module: str, *extra: dict[str, object]) -> None:
    systems = [
        {"name": "bm25-k1", "retriever": "bm25", "top_k": 1},
        {"name": "mine", "kind": "python", "callable": f"{module}:answer"},
        {"name": "team-b", "kind": "answers_file", "path": "answers/team-b.jsonl"},
        *extra,
    ]
    Path("systems.yaml").write_text(
        yaml.safe_dump({"defaults": {"chunking": "c256", "max_tokens": 32}, "systems": systems})
    )


def _answers_file(rows: list[dict[str, object]], name: str = "answers/team-b.jsonl") -> Path:
    path = Path(name)
    path.parent.mkdir(exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _calls() -> list[str]:
    """Question ids (or questions) the user's code was called with, in call order."""
    log = Path("calls.log")
    return log.read_text().split("\n")[:-1] if log.exists() else []


def generator(messages: list[dict[str, str]]) -> str:
    return "1803" if "1803" in messages[-1]["content"] else "NO-RESPONSE"


def test_mixed_run_error_rows_and_freshness_scripted_model(project: Params, module: str) -> None:
    _write_systems(module)
    team_b = _answers_file(
        [
            {"question_id": "q3", "answer": "The Sixteenth Amendment", "latency_s": 1.5,
             "contexts": ["The income tax became permanent with the Sixteenth Amendment."]},
            {"question_id": "q1", "answer": "1803"},
        ]
    )  # fmt: skip
    with scripted_model("gen", generator) as m:
        project.llm.model = m.model
        answer.run(project)
        out = read_table("data/answers/answers.parquet", "answers")
        assert out.select("system", "question_id").rows() == [
            (s, q) for s in ("bm25-k1", "mine", "team-b") for q, _ in QA
        ]
        by = {(r["system"], r["question_id"]): r for r in out.iter_rows(named=True)}
        assert by[("mine", "q2")]["error"] == "raised ValueError: index unavailable for q2"
        assert by[("mine", "q1")]["answer"] == f"from python: {QA[0][1]}"
        assert by[("mine", "q1")]["retrieved"][0]["chunk_id"] == "ext:mine:q1:0"
        assert by[("team-b", "q2")]["error"] == f"no answer for this question in {team_b}"
        assert by[("team-b", "q3")]["latency_s"] == 1.5
        assert by[("team-b", "q1")]["retrieved"] == []  # no contexts supplied
        assert by[("bm25-k1", "q1")]["answer"] == "1803" and by[("bm25-k1", "q1")]["error"] is None
        assert [r["model"] for r in out.iter_rows(named=True)][::3] == [
            m.model, "external:python", "external:answers_file"
        ]  # fmt: skip
        assert sorted(_calls()) == ["q1", "q2", "q3"]
        n_model_calls = len(m.calls)
        parts = Path("data/answers/systems")
        snapshot = {p.name: p.read_bytes() for p in parts.iterdir()}

        # unchanged inputs: no model call, no python call, the answers file is not re-read
        # into a new partition (the python system retries only its failed question)
        answer.run(project)
        assert len(m.calls) == n_model_calls
        assert sorted(_calls()) == ["q1", "q2", "q2", "q3"]
        for name in ("bm25-k1.parquet", "team-b.parquet"):
            assert (parts / name).read_bytes() == snapshot[name]

        # a changed answers file re-answers that system only
        Path("calls.log").unlink()
        _answers_file(
            [
                {"question_id": "q1", "answer": "In 1803"},
                {"question_id": "q2", "answer": "Promontory Summit"},
                {"question_id": "q3", "answer": "The Sixteenth Amendment"},
            ]
        )
        answer.run(project)
        assert len(m.calls) == n_model_calls
        assert _calls() == ["q2"]  # still failing; the rest kept
        assert (parts / "bm25-k1.parquet").read_bytes() == snapshot["bm25-k1.parquet"]
        team = read_table(parts / "team-b.parquet", "answers")
        assert team["answer"].to_list() == [
            "In 1803",
            "Promontory Summit",
            "The Sixteenth Amendment",
        ]
        assert team["error"].null_count() == 3


def test_python_system_answered_fully_is_fresh_and_not_called_again(
    project: Params, module: str
) -> None:
    log = "def answer(q):\n    open('calls.log', 'a').write(q + '\\n')\n"
    Path(f"{module}.py").write_text(log + "    return q\n")
    Path("systems.yaml").write_text(
        yaml.safe_dump(
            {"systems": [{"name": "mine", "kind": "python", "callable": f"{module}:answer"}]}
        )
    )
    answer.run(project)
    assert len(_calls()) == 3
    answer.run(project)
    assert len(_calls()) == 3  # fresh partition: no call at all
    # editing the module (a project file) makes the partition stale
    Path(f"{module}.py").write_text(log + "    return q.upper()\n")
    answer.run(project)
    assert len(_calls()) == 6
    assert read_table("data/answers/answers.parquet", "answers")["answer"][0] == QA[0][1].upper()


def test_bad_answers_file_is_a_one_line_stage_error(project: Params) -> None:
    Path("systems.yaml").write_text(
        yaml.safe_dump(
            {"systems": [{"name": "team-b", "kind": "answers_file", "path": "answers/b.jsonl"}]}
        )
    )
    bad = _answers_file(
        [{"question_id": "q1", "answer": "x"}, {"question_id": "q7", "answer": "y"}],
        "answers/b.jsonl",
    )
    with pytest.raises(SchemaError, match=r"answers/b.jsonl: line 2: column 'question_id': 'q7'"):
        answer.run(project)
    proc = subprocess.run(
        [sys.executable, "-m", "stages", "answer", "--params", "params.yaml"],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1] == (
        f"ragcourt: error: {bad}: line 2: column 'question_id': "
        "'q7' is not a question of the QA set"
    )
    assert not Path("data/answers/systems/team-b.parquet").exists()


def _cli() -> typer.Typer:
    app = typer.Typer()
    app.add_typer(questions_app, name="questions")
    app.add_typer(answers_app, name="answers")
    return app


def test_questions_export_then_answers_import(project: Params, module: str) -> None:
    _write_systems(module)
    _answers_file([{"question_id": "q1", "answer": "1803"}])
    runner = CliRunner()
    res = runner.invoke(_cli(), ["questions", "export"])
    assert res.exit_code == 0, res.output
    exported = [json.loads(line) for line in res.stdout.splitlines()]
    assert exported == [{"question_id": q, "question": t} for q, t in QA]  # no references
    res = runner.invoke(_cli(), ["questions", "export", "--format", "csv", "--out", "q.csv"])
    assert res.exit_code == 0, res.output
    assert Path("q.csv").read_text().splitlines()[:2] == ["question_id,question", f"q1,{QA[0][1]}"]

    bad = _answers_file(
        [{"question_id": "q1", "answer": "x"}, {"question_id": "q1", "answer": "y"}], "b.jsonl"
    )
    res = runner.invoke(_cli(), ["answers", "import", str(bad), "--system", "team-c"])
    assert res.exit_code == 2
    assert "b.jsonl: line 2: column 'question_id': duplicate 'q1' (first at line 1)" in res.output
    assert not Path("data/external").exists()

    good = _answers_file([{"question_id": q, "answer": f"a {q}"} for q, _ in QA[:2]], "good.jsonl")
    res = runner.invoke(_cli(), ["answers", "import", str(good), "--system", "team-c"])
    assert res.exit_code == 0, res.output
    assert "1 questions have no answer" in res.output and "q3" in res.output
    assert Path("data/external/team-c.jsonl").read_bytes() == good.read_bytes()
    assert (
        Path("systems.yaml")
        .read_text()
        .endswith("- {name: team-c, kind: answers_file, path: data/external/team-c.jsonl}\n")
    )
    with scripted_model("gen", generator) as m:
        project.llm.model = m.model
        answer.run(project, systems=None)
    out = read_table("data/answers/answers.parquet", "answers")
    team_c = out.filter(pl.col("system") == "team-c")
    assert team_c["answer"].to_list() == ["a q1", "a q2", None]


def test_answers_files_in_other_encodings_and_with_huge_cells(project: Params, module: str) -> None:
    """Latin-1 needs --encoding (else one line naming the file and line); UTF-16 with a BOM
    is read as is; the project's copy is UTF-8; a CSV cell over Python's default 131,072
    characters is read (then bounded by limits.context_max_chars as an error row)."""
    _write_systems(module)
    _answers_file([{"question_id": "q1", "answer": "1803"}])
    runner = CliRunner()
    rows = "".join(
        json.dumps({"question_id": q, "answer": f"café {q}"}, ensure_ascii=False) + "\n"
        for q, _ in QA
    )
    latin = Path("latin.jsonl")
    latin.write_bytes(rows.encode("latin-1"))
    res = runner.invoke(_cli(), ["answers", "import", str(latin), "--system", "team-l"])
    assert res.exit_code == 2
    errors = [ln for ln in res.output.splitlines() if ln.startswith("ragcourt: error:")]
    assert len(errors) == 1 and "latin.jsonl: line 1 is not utf-8 text" in errors[0]
    assert "--encoding" in errors[0]
    res = runner.invoke(
        _cli(), ["answers", "import", str(latin), "--system", "team-l", "--encoding", "latin-1"]
    )
    assert res.exit_code == 0, res.output
    assert Path("data/external/team-l.jsonl").read_text(encoding="utf-8") == rows
    wide = Path("wide.jsonl")
    wide.write_bytes(rows.encode("utf-16"))  # with its BOM
    res = runner.invoke(_cli(), ["answers", "import", str(wide), "--system", "team-u"])
    assert res.exit_code == 0, res.output
    assert Path("data/external/team-u.jsonl").read_text(encoding="utf-8") == rows

    big = Path("big.csv")
    cell = json.dumps(["p" * 200_000])
    big.write_text(
        "question_id,answer,contexts\n" + f'q1,an answer,"{cell.replace(chr(34), 2 * chr(34))}"\n'
    )
    res = runner.invoke(_cli(), ["answers", "import", str(big), "--system", "team-w"])
    assert res.exit_code == 0, res.output
    assert "Traceback" not in res.output


def test_questions_export_out_refuses_special_files(project: Params, tmp_path: Path) -> None:
    runner = CliRunner()
    Path("adir").mkdir()
    os.mkfifo("pipe")
    Path("link").symlink_to("/dev/null")
    for target, needle in (("adir", "a directory"), ("pipe", "not a regular file"),
                           ("link", "a link")):  # fmt: skip
        res = runner.invoke(_cli(), ["questions", "export", "--out", target])
        assert res.exit_code == 2, (target, res.output)
        errors = [ln for ln in res.output.splitlines() if ln.startswith("ragcourt: error:")]
        assert len(errors) == 1 and needle in errors[0], (target, res.output)
    assert Path("adir").is_dir() and Path("link").is_symlink()
    res = runner.invoke(_cli(), ["questions", "export", "--out", "-"])
    assert res.exit_code == 0 and json.loads(res.stdout.splitlines()[0])["question_id"] == "q1"
