"""``ragcourt label export`` writes no formula cell; ``label import`` reads the quoting back."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from typer.testing import CliRunner

from ragcourt.calibration.labels import LabelStore
from ragcourt.cli.label_cmd import app
from ragcourt.core import catalog
from ragcourt.core.io import write_parquet
from ragcourt.core.spreadsheet import FORMULA_STARTS, from_cell, to_cell

runner = CliRunner()
ANSWERS = ["=cmd|' /C calc'!A0", "+1+1", "-1", "@SUM(A1)", "\t=1", "\r=2", "'=3", "''@4", "ok"]


@pytest.fixture()
def project(tmp_path: Path, world: Any, monkeypatch: pytest.MonkeyPatch) -> Path:
    world.write(tmp_path)
    answers = world.answers.with_columns(
        pl.when(pl.col("answer").is_not_null())
        .then(pl.Series([ANSWERS[i % len(ANSWERS)] for i in range(world.answers.height)]))
        .otherwise(None)
        .alias("answer")
    )
    qa = world.qa.with_columns(pl.format("=Q({})", pl.col("question_id")).alias("question"))
    write_parquet(answers, tmp_path / catalog.path("answers"), "answers")
    write_parquet(qa, tmp_path / catalog.path("qa"), "qa")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _raw(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def test_export_quotes_formula_cells_and_import_restores_them(project: Path) -> None:
    res = runner.invoke(app, ["export", "s.csv", "--answers", "12", "--passages", "0"])
    assert res.exit_code == 0, res.output
    rows = _raw(project / "s.csv")
    assert len(rows) == 12
    for r in rows:
        for col, cell in r.items():
            assert cell[:1] not in FORMULA_STARTS, (col, cell)
    assert {from_cell(r["answer"]) for r in rows} <= set(ANSWERS)
    assert any(r["answer"].startswith("'") for r in rows)
    assert all(from_cell(r["question"]).startswith("=Q(") for r in rows)
    # a spreadsheet user fills the labels; every other cell goes back as exported
    for r in rows:
        r["label"] = "correct"
    with (project / "s.csv").open("w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    res = runner.invoke(app, ["import", "s.csv", "--labeler", "ann"])
    assert res.exit_code == 0, res.output
    assert "appended 12 labels" in res.output
    assert len(LabelStore(project / "data" / "labels", "ann").records()) == 12


def test_import_reads_a_quoted_label_cell(project: Path) -> None:
    runner.invoke(app, ["export", "s.csv", "--answers", "3", "--passages", "0"])
    rows = _raw(project / "s.csv")
    rows[0]["label"] = to_cell("-")  # "'-": a quoted cell, read back as "-", a bad label
    with (project / "s.csv").open("w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    res = runner.invoke(app, ["import", "s.csv"])
    assert res.exit_code == 2
    assert "'-'" in res.output and "''-'" not in res.output
