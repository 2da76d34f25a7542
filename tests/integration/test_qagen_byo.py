"""Bring-your-own QA file: validated against the qa schema and the documents, then used as is."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
import yaml

from ragcourt.core.errors import SchemaError
from ragcourt.core.io import read_table, write_parquet
from ragcourt.core.schemas import TABLES, frame_schema
from ragcourt.qagen.byo import load_byo_qa

ROOT = Path(__file__).resolve().parents[2]
TEXT = "The union is strong. Congress met in December. Taxes were lowered by ten percent."


def _documents() -> pl.DataFrame:
    return pl.DataFrame(
        [("d1", "a.txt", "A", "txt", TEXT, len(TEXT), None, "en", 1.0)],
        schema=frame_schema("documents"),
        orient="row",
    )


def _item(**over: object) -> dict[str, object]:
    start = TEXT.index("Congress")
    item: dict[str, object] = {
        "question_id": "u1",
        "question": "When did Congress meet?",
        "reference_answers": ["In December."],
        "doc_id": "d1",
        "char_start": start,
        "char_end": start + len("Congress met in December."),
    }
    item.update(over)
    return item


def _write_jsonl(path: Path, items: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(i) + "\n" for i in items), encoding="utf-8")
    return path


def test_valid_file_becomes_a_qa_table(tmp_path: Path) -> None:
    f = _write_jsonl(tmp_path / "qa.jsonl", [_item(), _item(question_id="u2",
                     reference_answers="Ten percent.")])  # fmt: skip
    qa = load_byo_qa(f, _documents())
    assert list(qa.columns) == list(TABLES["qa"])
    assert qa["context"][0] == "Congress met in December."
    assert qa["reference_answers"].to_list()[1] == ["Ten percent."]
    assert qa["origin"].unique().to_list() == ["byo"]
    assert qa["answerability_score"].null_count() == 2


@pytest.mark.parametrize(
    ("items", "message"),
    [
        ([{k: v for k, v in _item().items() if k != "doc_id"}], "missing column 'doc_id'"),
        ([_item(), _item()], "row 2: column 'question_id': duplicate id 'u1'"),
        ([_item(doc_id="nope")], "row 1: column 'doc_id': unknown document 'nope'"),
        ([_item(char_end=10_000)], "row 1: column 'char_start': span"),
        ([_item(context="something else")], "row 1: column 'context': differs"),
        ([_item(reference_answers=[])], "row 1: column 'reference_answers'"),
        ([_item(question="  ")], "row 1: column 'question': empty"),
        ([_item(char_start="x")], "column 'char_start' has dtype"),
        # offsets: a fractional offset was truncated, a null char_end blamed char_start
        ([_item(), _item(question_id="u2", char_start=1.5)], "row 2: column 'char_start': 1.5 "),
        ([_item(char_end=None)], "row 1: column 'char_end': missing"),
    ],
)
def test_invalid_file_names_file_row_and_column(
    tmp_path: Path, items: list[dict[str, object]], message: str
) -> None:
    f = _write_jsonl(tmp_path / "bad.jsonl", items)
    with pytest.raises(SchemaError, match=message) as err:
        load_byo_qa(f, _documents())
    assert str(f) in str(err.value)


def test_stage_uses_the_file_and_skips_generation(tmp_path: Path) -> None:
    write_parquet(_documents(), tmp_path / "data/documents.parquet", "documents")
    qa_in = load_byo_qa(_write_jsonl(tmp_path / "mine.jsonl", [_item()]), _documents())
    write_parquet(qa_in.drop("context", "origin"), tmp_path / "mine.parquet")
    params = {"qagen": {"qa_file": "mine.parquet"}}
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "stages", "qagen"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    qa = read_table(tmp_path / "data/qa/qa.parquet", "qa")
    assert qa["question_id"].to_list() == ["u1"]
    assert read_table(tmp_path / "data/qa/qa_rejected.parquet", "qa_rejected").is_empty()
    summary = json.loads((tmp_path / "data/qa/summary.json").read_text())
    assert summary == {  # the keys and values this stage has always written
        "requested": 1, "accepted": 1, "attempts": 0, "acceptance_rate": None,
        "stop_reason": "qa_file", "qa_file": "mine.parquet", "rejections": {},
    }  # fmt: skip
    assert (tmp_path / "data/metrics/llm_qagen.json").is_file()  # DVC metric, zero calls


def test_stage_reports_a_bad_file_in_one_line_exit_2(tmp_path: Path) -> None:
    write_parquet(_documents(), tmp_path / "data/documents.parquet", "documents")
    _write_jsonl(tmp_path / "mine.jsonl", [_item(doc_id="missing")])
    (tmp_path / "params.yaml").write_text(yaml.safe_dump({"qagen": {"qa_file": "mine.jsonl"}}))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "stages", "qagen"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert lines == [
        "ragcourt: error: mine.jsonl: row 1: column 'doc_id': unknown document 'missing' "
        "(not in data/documents.parquet)"
    ]
    assert not (tmp_path / "data/qa").exists()


def test_nan_in_jsonl_names_the_row(tmp_path: Path) -> None:
    """Python's json writes NaN; polars then failed with a parser error naming no row."""
    f = tmp_path / "nan.jsonl"
    f.write_text(
        json.dumps(_item())
        + "\n"
        + json.dumps(_item(question_id="u2", char_start=float("nan")))
        + "\n"
    )
    with pytest.raises(
        SchemaError, match=r"nan.jsonl: row 2: not valid JSON \(NaN is not a JSON number\)"
    ):
        load_byo_qa(f, _documents())
