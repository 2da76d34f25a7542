"""``ragcourt questions export --format csv`` writes no formula cell, and an answers CSV built
from it (formula-quoted cells included) is read back with the exact texts."""

from __future__ import annotations

import csv
from pathlib import Path

import polars as pl
import pytest
import typer
from typer.testing import CliRunner

from ragcourt.answering.external.answers_file import read_answers_file
from ragcourt.cli.external_cmd import questions_app
from ragcourt.core.io import write_parquet
from ragcourt.core.schemas import frame_schema
from ragcourt.core.spreadsheet import FORMULA_STARTS, to_cell

QUESTIONS = {
    "q1": '=HYPERLINK("http://evil.example","x")',
    "q2": "+1-1",
    "q3": "-3 degrees: how cold?",
    "q4": "@SUM(A1:A2)",
    "q5": "\t=tab",
    "q6": "'=already quoted?",
    "q7": "plain question",
}


@pytest.fixture
def qa(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> pl.DataFrame:
    monkeypatch.chdir(tmp_path)
    df = pl.DataFrame({"question_id": list(QUESTIONS), "question": list(QUESTIONS.values())})
    df = df.with_columns(
        pl.lit(None, dtype=t).alias(c) for c, t in frame_schema("qa").items() if c not in df.columns
    )
    write_parquet(df, "data/qa/qa.parquet", "qa")
    return df


def test_questions_csv_has_no_formula_and_answers_csv_round_trips(qa: pl.DataFrame) -> None:
    app = typer.Typer()
    app.add_typer(questions_app, name="questions")
    res = CliRunner().invoke(app, ["questions", "export", "--format", "csv", "--out", "q.csv"])
    assert res.exit_code == 0, res.output
    with Path("q.csv").open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["question_id"] for r in rows] == list(QUESTIONS)
    for r in rows:
        assert r["question"][:1] not in FORMULA_STARTS, r
    # the team answers in a spreadsheet, keeping the (quoted) question column
    answers = {q: f"-{i} or =A{i}" for i, q in enumerate(QUESTIONS)}
    with Path("a.csv").open("w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(["question_id", "question", "answer"])
        w.writerows(
            [r["question_id"], r["question"], to_cell(answers[r["question_id"]])] for r in rows
        )
    checked = read_answers_file("a.csv", qa)  # the question cells equal the QA texts again
    assert {q: r.answer for q, r in checked.replies.items()} == answers
    assert checked.unanswered == []
