"""``ragcourt label export|import`` on a project folder with judged artifacts."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ragcourt.calibration.labels import LabelStore
from ragcourt.cli.label_cmd import app

runner = CliRunner()


@pytest.fixture()
def project(tmp_path: Path, world: Any, monkeypatch: pytest.MonkeyPatch) -> Path:
    world.write(tmp_path)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def _write(path: Path, rows: list[dict[str, str]]) -> None:
    with path.open("w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def test_export_then_import(project: Path) -> None:
    res = runner.invoke(app, ["export", "s.csv", "--answers", "9", "--passages", "3"])
    assert res.exit_code == 0, res.output
    rows = _rows(project / "s.csv")
    assert len(rows) == 12
    for r in rows[:4]:
        r["label"] = "i" if r["kind"] == "answer" else "2"
    _write(project / "s.csv", rows)
    res = runner.invoke(app, ["import", "s.csv", "--labeler", "ann"])
    assert res.exit_code == 0, res.output
    assert "appended 4 labels" in res.output
    recs = LabelStore(project / "data" / "labels", "ann").records()
    assert [r.item_id for r in recs] == [r["item_id"] for r in rows[:4]]
    # the same seed and sizes give the same sample, now with the labels filled in
    res = runner.invoke(
        app, ["export", "t.csv", "--answers", "9", "--passages", "3", "--labeler", "ann"]
    )
    assert res.exit_code == 0
    again = _rows(project / "t.csv")
    assert [r["item_id"] for r in again] == [r["item_id"] for r in rows]
    assert [r["label"] for r in again[:4]] == [
        "incorrect" if r["kind"] == "answer" else "2" for r in rows[:4]
    ]


def test_import_error_is_one_line_with_file_and_line(project: Path) -> None:
    runner.invoke(app, ["export", "s.csv", "--answers", "6", "--passages", "0"])
    rows = _rows(project / "s.csv")
    rows[3]["label"] = "definitely"
    _write(project / "s.csv", rows)
    res = runner.invoke(app, ["import", "s.csv"])
    assert res.exit_code == 2
    # the record's first physical line (quoted fields span lines) and its spreadsheet row
    first_line = 1 + sum(1 + sum(v.count("\n") for v in r.values()) for r in rows[:3]) + 1
    assert f"s.csv:{first_line} (row 5):" in res.output and "is not one of" in res.output
    assert not (project / "data" / "labels" / "labels.jsonl").exists()


def test_missing_artifacts_and_bad_labeler_are_user_errors(
    tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, ["export", "s.csv"])
    assert res.exit_code == 2 and "input artifact not found" in res.output
    res = runner.invoke(app, ["import", "s.csv", "--labeler", "../x"])
    assert res.exit_code == 2 and "labeler name" in res.output
