"""Answers files: the three formats, row-by-row errors naming the row, unanswered questions
as error rows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from ragcourt.answering.external.answers_file import (
    AnswersFile,
    answer_from_file,
    read_answers_file,
)
from ragcourt.core.errors import SchemaError

QA = pl.DataFrame(
    {
        "question_id": ["q1", "q2", "q3"],
        "question": ["When?", 'Who said "hi"?', "Where?"],
    }
)


def jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def test_jsonl_with_contexts_latency_cost_and_question_echo(tmp_path: Path) -> None:
    f = jsonl(
        tmp_path / "a.jsonl",
        [
            {"question_id": "q1", "answer": "1803", "contexts": ["p", {"text": "t", "score": 1}],
             "latency_s": 0.5, "cost_usd": 0.01, "question": "When?"},
            "",
            {"question_id": "q2", "answer": "NO-RESPONSE", "contexts": None},
        ],
    )  # fmt: skip
    checked = read_answers_file(f, QA)
    assert list(checked.replies) == ["q1", "q2"] and checked.unanswered == ["q3"]
    df = answer_from_file("team", "external:answers_file", f, QA)
    assert df["question_id"].to_list() == ["q1", "q2", "q3"]  # QA order, one row each
    assert df["answer"].to_list() == ["1803", "NO-RESPONSE", None]
    assert df["abstained"].to_list() == [False, True, None]
    assert df["latency_s"].to_list() == [0.5, None, None]
    assert df["retrieved"].list.len().to_list() == [2, 0, 0]
    assert df["retrieved"][0][1]["chunk_id"] == "ext:team:q1:1"
    assert df["error"].to_list()[:2] == [None, None]
    assert df["error"][2] == f"no answer for this question in {f}"


def test_csv_and_parquet(tmp_path: Path) -> None:
    csv = tmp_path / "a.csv"
    csv.write_text(
        'question_id,answer,contexts,latency_s\nq1,"1803, in spring","[""p1"", ""p2""]",0.25\n'
        "q3,Lima,,\n"
    )
    checked = read_answers_file(csv, QA)
    bom = tmp_path / "bom.csv"
    bom.write_bytes(b"\xef\xbb\xbf" + csv.read_bytes())  # as spreadsheets export it
    assert read_answers_file(bom, QA) == AnswersFile(bom, checked.replies, ["q2"])
    assert checked.replies["q1"].answer == "1803, in spring"
    assert [p.text for p in checked.replies["q1"].contexts] == ["p1", "p2"]
    assert checked.replies["q1"].latency_s == 0.25 and checked.replies["q3"].contexts == ()
    pq = tmp_path / "a.parquet"
    pl.DataFrame(
        {
            "question_id": ["q2", "q1"],
            "answer": ["Ann", "1803"],
            "contexts": [[{"text": "x", "doc_id": "d"}], None],
        }
    ).write_parquet(pq)
    checked = read_answers_file(pq, QA)
    assert checked.replies["q2"].contexts[0].doc_id == "d" and checked.unanswered == ["q3"]


@pytest.mark.parametrize(
    ("rows", "needle"),
    [
        ([{"question_id": "q9", "answer": "x"}], "line 1: column 'question_id': 'q9' is not a"),
        (
            [{"question_id": "q1", "answer": "x"}, {"question_id": "q1", "answer": "y"}],
            "line 2: column 'question_id': duplicate 'q1' (first at line 1)",
        ),
        (
            [{"question_id": "q1", "answer": "x"}, {"question_id": "q2"}],
            "line 2: missing column 'answer'",
        ),
        ([{"question_id": "q2", "answer": None}], "line 1: column 'answer': missing for 'q2'"),
        ([{"question_id": "q2", "answer": "  "}], "line 1: column 'answer': must be a non-empty"),
        ([{"question_id": "q2", "answer": 3}], "line 1: column 'answer': must be a non-empty"),
        ([{"question_id": "", "answer": "x"}], "line 1: column 'question_id': missing"),
        ([{"question_id": "q1", "answer": "x", "extra": 1}], "line 1: unknown column 'extra'"),
        (["{not json"], "line 1: not valid JSON"),
        (["[1, 2]"], "line 1: expected a JSON object"),
        ([{"question_id": "q1", "answer": "x", "question": "Why?"}], "differs from the QA set"),
        ([{"question_id": "q1", "answer": "x", "latency_s": -2}], "line 1: latency_s: must be"),
        ([{"question_id": "q1", "answer": "x", "contexts": [{}]}], "line 1: contexts[0]: 'text'"),
    ],
)
def test_bad_rows_are_one_line_errors_naming_the_row(
    tmp_path: Path, rows: list[Any], needle: str
) -> None:
    f = jsonl(tmp_path / "bad.jsonl", rows)
    with pytest.raises(SchemaError) as err:
        read_answers_file(f, QA)
    msg = str(err.value)
    assert msg.startswith(f"{f}: ") and "\n" not in msg
    assert needle in msg


def test_bad_csv_cells_and_files(tmp_path: Path) -> None:
    bad_ctx = tmp_path / "c.csv"
    bad_ctx.write_text("question_id,answer,contexts\nq1,x,just text\n")
    with pytest.raises(SchemaError, match=r"row 1: column 'contexts': a CSV cell must hold"):
        read_answers_file(bad_ctx, QA)
    bad_num = tmp_path / "n.csv"
    bad_num.write_text("question_id,answer,latency_s\nq1,x,fast\n")
    with pytest.raises(SchemaError, match=r"row 1: column 'latency_s': 'fast' is not a number"):
        read_answers_file(bad_num, QA)
    no_answer_col = tmp_path / "h.csv"
    no_answer_col.write_text("question_id,reply\nq1,x\n")
    with pytest.raises(SchemaError, match=r"unknown column 'reply'"):
        read_answers_file(no_answer_col, QA)
    with pytest.raises(SchemaError, match="answers file not found"):
        read_answers_file(tmp_path / "nope.jsonl", QA)
    broken = tmp_path / "b.parquet"
    broken.write_bytes(b"not parquet")
    with pytest.raises(SchemaError, match="not a readable Parquet file"):
        read_answers_file(broken, QA)


def test_integer_question_ids_in_json_match_text_ids(tmp_path: Path) -> None:
    qa = pl.DataFrame({"question_id": ["1", "2"], "question": ["a?", "b?"]})
    f = jsonl(tmp_path / "a.jsonl", [{"question_id": 1, "answer": "x"}])
    assert read_answers_file(f, qa).unanswered == ["2"]
