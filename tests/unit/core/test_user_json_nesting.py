"""Deeply nested JSON in a user file is one line naming the file and line, never a
RecursionError traceback (or a crash in polars' parser): labels, bring-your-own QA (.jsonl and
.json), few-shot questions (.json and .jsonl), systems.yaml ``body`` given as JSON text."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from ragcourt.calibration.labels import read_label_file
from ragcourt.core.errors import ConfigError, RagcourtError, SchemaError
from ragcourt.core.user_json import MAX_JSON_DEPTH, JsonTooDeep, json_depth, loads_user_json
from ragcourt.qagen.byo import load_byo_qa
from ragcourt.qagen.contexts import load_few_shot

DEEP = "[" * 100_000 + "]" * 100_000  # past Python's recursion limit
JUST_TOO_DEEP = "[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1)
DOCS = pl.DataFrame({"doc_id": ["d1"], "text": ["some text"]})


@pytest.mark.parametrize("text", [DEEP, JUST_TOO_DEEP, '{"a": ' * 70 + "1" + "}" * 70])
def test_too_deep_is_a_value_error(text: str) -> None:
    with pytest.raises(JsonTooDeep, match=f"nested deeper than {MAX_JSON_DEPTH} levels"):
        loads_user_json(text)


def test_depth_at_the_bound_is_accepted() -> None:
    ok = "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH
    assert json_depth(loads_user_json(ok)) == MAX_JSON_DEPTH
    assert json_depth(3) == 0 and json_depth({"a": [1]}) == 2


def test_label_file(tmp_path: Path) -> None:
    path = tmp_path / "ann.jsonl"
    path.write_text('{"x": ' + DEEP + "}\n")
    with pytest.raises(RagcourtError) as info:
        read_label_file(path)
    assert f"{path}:1: invalid label row: JSON nested deeper" in str(info.value), info.value


@pytest.mark.parametrize(
    ("suffix", "text", "needle"),
    [
        (
            ".jsonl",
            '{"question_id": "q1"}\n{"question": ' + DEEP + "}\n",
            ": row 2: not valid JSON",
        ),
        (".json", '[{"question": ' + DEEP + "}]", ": not valid JSON (JSON nested deeper"),
    ],
)
def test_byo_qa_file(tmp_path: Path, suffix: str, text: str, needle: str) -> None:
    path = tmp_path / f"qa{suffix}"
    path.write_text(text)
    with pytest.raises(SchemaError) as info:
        load_byo_qa(path, DOCS)
    assert str(info.value).startswith(str(path)) and needle in str(info.value), info.value


@pytest.mark.parametrize(
    ("suffix", "text", "needle"),
    [(".json", DEEP, "invalid JSON in qagen.few_shot_file (JSON nested deeper"),
     (".jsonl", '"q one?"\n' + DEEP + "\n", ": line 2: invalid JSON in qagen.few_shot_file")],
)  # fmt: skip
def test_few_shot_file(tmp_path: Path, suffix: str, text: str, needle: str) -> None:
    path = tmp_path / f"few{suffix}"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_few_shot(path)
    assert needle in str(info.value), info.value


def test_http_body_json_text_in_systems_yaml(tmp_path: Path) -> None:
    """A real process: ``ragcourt systems list`` on a body given as deeply nested JSON text."""
    (tmp_path / "params.yaml").write_text("systems_file: systems.yaml\n")
    (tmp_path / "systems.yaml").write_text(
        "systems:\n  - name: s\n    kind: http\n    url: http://127.0.0.1:9/ask\n"
        f"    answer_path: answer\n    body: '{DEEP}'\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "ragcourt.cli.main", "systems", "list"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert "systems.yaml" in proc.stderr and "nested deeper than" in proc.stderr, proc.stderr
