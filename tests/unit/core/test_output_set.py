"""A stage's outputs are renamed into place as a set (ragcourt.core.io.output_set)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragcourt.core.errors import StageFailed
from ragcourt.core.io import output_set, write_json, write_text, write_with


def _old(tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "out/a.json", tmp_path / "out/b.txt"
    write_json({"v": "old"}, a)
    write_text("old", b)
    return a, b


def test_failure_after_the_first_output_leaves_every_previous_output(tmp_path: Path) -> None:
    a, b = _old(tmp_path)

    def broken_plot(tmp: Path) -> None:
        raise ValueError("plot failed")

    with pytest.raises(ValueError, match="plot failed"), output_set():
        write_json({"v": "new"}, a)
        write_text("new", b)
        write_with(tmp_path / "out/c.png", broken_plot)
    assert a.read_text().count("old") == 1 and b.read_text() == "old"
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["a.json", "b.txt"]


def test_outputs_appear_only_when_the_set_ends(tmp_path: Path) -> None:
    a, b = _old(tmp_path)
    with output_set() as pending:
        write_json({"v": "new"}, a)
        write_text("new", b)
        write_text("twice-1", tmp_path / "out/c.txt")
        write_text("twice-2", tmp_path / "out/c.txt")
        assert b.read_text() == "old" and len(pending) == 4  # nothing renamed yet
    assert '"new"' in a.read_text() and b.read_text() == "new"
    assert (tmp_path / "out/c.txt").read_text() == "twice-2"  # the last write wins
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["a.json", "b.txt", "c.txt"]


def test_stage_failed_commits_the_outputs_then_propagates(tmp_path: Path) -> None:
    a, _ = _old(tmp_path)
    with pytest.raises(StageFailed), output_set():
        write_json({"v": "error rows"}, a)
        raise StageFailed("too many failed calls")
    assert "error rows" in a.read_text()


def test_durable_writes_and_nested_sets(tmp_path: Path) -> None:
    a, b = _old(tmp_path)
    with pytest.raises(RuntimeError), output_set():
        write_json({"v": "resume state"}, a, durable=True)  # e.g. an answer partition
        assert "resume state" in a.read_text()
        with output_set():  # joins the outer set
            write_text("inner", b)
        assert b.read_text() == "old"
        raise RuntimeError("killed")
    assert "resume state" in a.read_text() and b.read_text() == "old"
