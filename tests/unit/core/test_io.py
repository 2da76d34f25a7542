"""Atomic writes: artifacts get the ordinary ``0o666 & ~umask`` mode, not mkstemp's 0600."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest

from ragcourt.core.io import atomic_path, write_json, write_parquet, write_text


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def _mode(p: Path) -> int:
    return stat.S_IMODE(p.stat().st_mode)


def test_atomic_writes_get_0644_under_umask_022(tmp_path: Path, umask_022: None) -> None:
    written = [
        write_json({"a": 1}, tmp_path / "m.json"),
        write_text("x", tmp_path / "r.md"),
        write_parquet(pl.DataFrame({"a": [1]}), tmp_path / "t.parquet"),
    ]
    for p in written:
        assert _mode(p) == 0o644, p
    assert sorted(q.name for q in tmp_path.iterdir()) == ["m.json", "r.md", "t.parquet"]


def test_atomic_write_follows_a_stricter_umask(tmp_path: Path) -> None:
    old = os.umask(0o077)
    try:
        p = write_text("x", tmp_path / "private.txt")
    finally:
        os.umask(old)
    assert _mode(p) == 0o600


def test_failed_block_leaves_neither_target_nor_temp(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_text("half")
        raise RuntimeError("writer failed")
    assert list(tmp_path.iterdir()) == []
