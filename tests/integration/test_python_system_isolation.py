"""User code cannot take the answer stage down: ``kind: python`` systems that call
``sys.exit``, ``os._exit(3)``, hang, or segfault run the real stage (``python -m
stages answer``, a real process) to the end; the question in flight becomes an error
row saying what happened and the other questions are answered by a fresh worker."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import polars as pl
import pytest
import yaml

from ragcourt.core.io import read_table, write_parquet
from ragcourt.core.schemas import frame_schema
from ragcourt.orchestration.params import load_params

ROOT = Path(__file__).resolve().parents[2]
QA = [("q1", "first?"), ("q2", "second?"), ("q3", "third?")]

# Every function answers q1 and q3 and misbehaves on q2 only.
USER_MODULE = """
import ctypes, os, sys, time

def exits(question, question_id):
    if question_id == "q2":
        sys.exit(5)
    return "exits: " + question

def hard_exit(question, question_id):
    if question_id == "q2":
        os._exit(3)
    print("stdout noise that must not break the protocol")
    return "hard_exit: " + question

def hangs(question, question_id):
    if question_id == "q2":
        time.sleep(600)
    return "hangs: " + question

def segfault(question, question_id):
    if question_id == "q2":
        ctypes.string_at(0)
    return "segfault: " + question

async def async_exit(question, question_id):
    if question_id == "q2":
        raise SystemExit("bye")
    return "async_exit: " + question
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "configs/prompts").mkdir(parents=True)
    for rel in ("configs/prompts/answer.yaml", "configs/models.yaml"):
        (tmp_path / rel).write_bytes((ROOT / rel).read_bytes())
    params = load_params(ROOT / "params.yaml").model_copy(deep=True)
    params.llm.cache_dir = str(tmp_path / ".cache")
    params.systems_file = "systems.yaml"
    params.llm.models_file = "configs/models.yaml"
    Path("params.yaml").write_text(yaml.safe_dump(params.model_dump(mode="json")))
    qa = pl.DataFrame({"question_id": [q for q, _ in QA], "question": [t for _, t in QA]})
    qa = qa.with_columns(
        pl.lit(None, dtype=t).alias(c) for c, t in frame_schema("qa").items() if c not in qa.columns
    )
    write_parquet(qa, "data/qa/qa.parquet", "qa")
    (tmp_path / "misbehaving_rag.py").write_text(textwrap.dedent(USER_MODULE))
    return tmp_path


def _systems(*entries: dict[str, object]) -> None:
    Path("systems.yaml").write_text(yaml.safe_dump({"systems": list(entries)}))


def _stage() -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "stages", "answer", "--params", "params.yaml"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def _py(name: str, attr: str, **extra: object) -> dict[str, object]:
    return {"name": name, "kind": "python", "callable": f"misbehaving_rag:{attr}", **extra}


def test_exit_crash_and_hang_become_error_rows_and_the_stage_finishes(project: Path) -> None:
    _systems(
        _py("exits", "exits"),
        _py("hard-exit", "hard_exit"),
        _py("hangs", "hangs", timeout_s=2),
        _py("segfault", "segfault"),
        _py("async-exit", "async_exit"),
    )
    t0 = time.perf_counter()
    proc = _stage()
    seconds = time.perf_counter() - t0
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    out = read_table("data/answers/answers.parquet", "answers")
    by = {(r["system"], r["question_id"]): r for r in out.iter_rows(named=True)}
    assert by[("exits", "q2")]["error"] == "raised SystemExit: 5"
    assert by[("async-exit", "q2")]["error"] == "raised SystemExit: bye"
    assert by[("hard-exit", "q2")]["error"] == "system process exited with code 3"
    assert by[("segfault", "q2")]["error"] == "system process was killed by signal SIGSEGV"
    assert by[("hangs", "q2")]["error"] == "timed out after 2s (system process killed)"
    for system, attr in [("exits", "exits"), ("hard-exit", "hard_exit"), ("hangs", "hangs"),
                         ("segfault", "segfault"), ("async-exit", "async_exit")]:  # fmt: skip
        for qid, question in (QA[0], QA[2]):
            row = by[(system, qid)]
            assert row["error"] is None and row["answer"] == f"{attr}: {question}", row
    assert seconds < 120  # the hang was killed at 2 s, not waited for (600 s)


def test_a_dying_worker_is_replaced_for_the_next_question(project: Path) -> None:
    """One worker (concurrency 1): q2 kills it, q3 is answered by a fresh one."""
    _systems(_py("hard-exit", "hard_exit", concurrency=1), _py("seg", "segfault", concurrency=1))
    proc = _stage()
    assert proc.returncode == 0, proc.stderr
    out = read_table("data/answers/answers.parquet", "answers")
    for system in ("hard-exit", "seg"):
        rows = out.filter(pl.col("system") == system)
        assert rows["error"].is_null().to_list() == [True, False, True], rows


def test_in_process_unsafe_is_what_it_says(project: Path) -> None:
    """The opt-out runs the callable in the stage's own process: ``os._exit(3)`` ends the
    stage with code 3 and no rows (the behaviour isolation prevents); SystemExit is still an
    error row there."""
    _systems(_py("exits", "exits", isolation="in_process_unsafe"))
    proc = _stage()
    assert proc.returncode == 0, proc.stderr
    out = read_table("data/answers/answers.parquet", "answers")
    assert out["error"].to_list() == [None, "raised SystemExit: 5", None]
    _systems(_py("hard-exit", "hard_exit", isolation="in_process_unsafe", concurrency=1))
    proc = _stage()
    assert proc.returncode == 3
    assert not Path("data/answers/systems/hard-exit.parquet").exists()


def test_a_module_that_exits_on_import_is_a_one_line_config_error(project: Path) -> None:
    Path("exits_on_import.py").write_text("import os\nos._exit(7)\n")
    _systems({"name": "bad", "kind": "python", "callable": "exits_on_import:f"})
    proc = _stage()
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == (
        "ragcourt: error: system 'bad': system process exited with code 7 while loading "
        "'exits_on_import:f'"
    )
