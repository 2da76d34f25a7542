"""Temp files a killed stage left (``.<name>.<32 hex>.<suffix>``, as ``core.io`` names them) are
removed when the same stage call starts again, through the real stage entry in its own process,
and DVC never counts one as part of an output (``.dvcignore``)."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

from _tiny_project import ROOT, make_project, sh, tool_env

from ragcourt.core.io import TEMP_IGNORE_PATTERN, TEMP_NAME, stale_temps, temp_path


def _stage(ws: Path, *args: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "stages", *args],
        cwd=ws,
        env=tool_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr


def _litter(folder: Path, name: str, suffix: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".{name}.{uuid.uuid4().hex}{suffix}"
    tmp.write_bytes(b"half a file")
    return tmp


def test_stage_start_removes_its_own_stale_temps_only(tmp_path: Path) -> None:
    ws = make_project(tmp_path / "p")
    _stage(ws, "ingest")
    chunks = ws / "data/chunks"
    own = [_litter(chunks, "c16.parquet", ".tmp"), _litter(chunks, "c16.parquet", ".parquet")]
    other = _litter(chunks, "c32.parquet", ".tmp")  # another partition's call: not this one's
    keep = chunks / ".c16.parquet.notatemp.tmp"
    keep.write_text("x")
    _stage(ws, "chunk", "--chunking", "c16")
    assert [p for p in own if p.exists()] == []
    assert other.exists() and keep.exists()
    assert (chunks / "c16.parquet").is_file()


def test_stale_temps_of_a_partitioned_folder_and_the_name_pattern(tmp_path: Path) -> None:
    target = tmp_path / "data/mine/systems/a.parquet"
    made = temp_path(target, ".parquet")
    assert TEMP_NAME.match(made.name)
    made.parent.mkdir(parents=True)
    made.write_text("x")
    other = _litter(made.parent, "b.parquet", ".tmp")
    assert stale_temps(made.parent / "*.parquet") == sorted([made, other])
    assert stale_temps(target) == [made]
    assert TEMP_IGNORE_PATTERN in (ROOT / ".dvcignore").read_text().splitlines()


def test_dvc_status_ignores_a_temp_inside_a_folder_output(tmp_path: Path) -> None:
    """A folder output (as ``data/answers`` is): a temp inside it does not change it."""
    ws = make_project(tmp_path / "p", dvc=True)
    (ws / "data/mine/systems").mkdir(parents=True)
    (ws / "data/mine/systems/a.parquet").write_bytes(b"rows")
    sh([sys.executable, "-m", "dvc", "add", "-q", "data/mine"], ws)
    dvc = [sys.executable, "-m", "dvc", "status", "data/mine.dvc"]
    assert "up to date" in sh(dvc, ws)
    _litter(ws / "data/mine/systems", "b.parquet", ".parquet")
    _litter(ws / "data/mine/systems", "a.parquet", ".tmp")
    assert "up to date" in sh(dvc, ws)
    ignore = ws / ".dvcignore"  # without the pattern, DVC sees the folder modified
    ignore.write_text(ignore.read_text().replace(TEMP_IGNORE_PATTERN, ""))
    assert "modified" in sh(dvc, ws)
