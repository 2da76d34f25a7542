"""``ragcourt label import``: an item id holding rich markup and a newline is named in one
plain line on a narrow pipe (a real process, ``COLUMNS=40``), never read as markup."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from ragcourt.cli.label_cmd import app

ITEM = "ans:[/red]q1\nsecond"


def test_unknown_item_id_with_markup_is_one_escaped_line(
    tmp_path: Path, world: Any, monkeypatch: Any
) -> None:
    world.write(tmp_path)
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(app, ["export", "s.csv", "--answers", "6", "--passages", "0"])
    assert res.exit_code == 0, res.output
    with (tmp_path / "s.csv").open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    rows[0]["item_id"], rows[0]["label"] = ITEM, "c"
    with (tmp_path / "s.csv").open("w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    proc = subprocess.run(
        [sys.executable, "-c", "from ragcourt.cli.label_cmd import app; app()", "import", "s.csv"],
        cwd=tmp_path,
        env={**os.environ, "COLUMNS": "40", "NO_COLOR": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    [line] = proc.stderr.splitlines()
    assert line.startswith("ragcourt: error: s.csv:2")
    assert "item_id 'ans:[/red]q1\\nsecond' is not an item of the current data" in line
