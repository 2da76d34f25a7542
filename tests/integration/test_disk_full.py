"""A full disk (ENOSPC) is one line naming the path, with nothing half-written: a real tmpfs
of a few hundred KB under the stage's data folder (skipped where mounting is not allowed)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest

from ragcourt.core.errors import RagcourtError
from ragcourt.core.io import write_parquet, write_text


def _mount_tmpfs(where: Path, size: str) -> bool:
    where.mkdir(parents=True, exist_ok=True)
    try:
        proc = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
            capture_output=True, timeout=20,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    where = tmp_path / "small"
    if not _mount_tmpfs(where, "256k"):
        pytest.skip("cannot mount a tmpfs here (needs root and mount rights)")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True, timeout=20)


def test_a_write_that_runs_out_of_space_is_one_line_and_leaves_the_old_file(
    small_disk: Path,
) -> None:
    target = small_disk / "table.parquet"
    write_parquet(pl.DataFrame({"x": [1, 2, 3]}), target)
    before = target.read_bytes()
    big = pl.DataFrame({"x": [os.urandom(64).hex() for _ in range(50_000)]})
    with pytest.raises(RagcourtError) as err:
        write_parquet(big, target)
    msg = str(err.value)
    assert str(target) in msg and "no space left" in msg and "\n" not in msg
    assert target.read_bytes() == before  # the previous output is intact
    assert [p.name for p in small_disk.iterdir()] == ["table.parquet"]  # no temp left
    with pytest.raises(RagcourtError, match="no space left"):
        write_text("y" * 1_000_000, small_disk / "report.html")


def test_a_stage_on_a_full_disk_exits_2_with_one_line(tmp_path: Path, small_disk: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i in range(40):
        (corpus / f"doc{i}.txt").write_text(os.urandom(8_000).hex(), encoding="utf-8")
    project = tmp_path / "project"
    project.mkdir()
    (project / "params.yaml").write_text(f"corpus: {{dir: {corpus}}}\n", encoding="utf-8")
    (project / "data").symlink_to(small_disk)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    proc = subprocess.run(
        [sys.executable, "-m", "stages", "ingest"],
        cwd=project, capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr[-2000:]
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("ragcourt: error:")]
    assert len(errors) == 1 and "no space left" in errors[0], proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    assert not [p for p in small_disk.iterdir() if p.name.startswith(".")]  # no temp left
