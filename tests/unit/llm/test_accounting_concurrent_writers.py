"""Issue 17, defect 10: two processes running one stage at once must not overwrite each
other's ``llm_<stage>.json``; a later, sequential run replaces the file."""

from __future__ import annotations

import json
import multiprocessing as mp
from pathlib import Path

from ragcourt.llm.accounting import StageAccount


def _one_run(path: str, calls: int, go: object, started: object) -> None:
    """A stage process: its account starts, waits until both processes have started, makes
    ``calls`` model calls and writes its metrics."""
    acc = StageAccount("answer")
    started.set()  # type: ignore[attr-defined]
    go.wait(10)  # type: ignore[attr-defined]
    for _ in range(calls):
        acc.record("local/m", cached=False, ok=True, prompt_tokens=10, latency_s=0.5)
    acc.add_wall_time(1.0)
    acc.write(path)


def test_two_concurrent_processes_add_up_their_counts(tmp_path: Path) -> None:
    path = tmp_path / "metrics" / "llm_answer.json"
    ctx = mp.get_context("fork")  # the child runs this module's function
    go = ctx.Event()
    started = [ctx.Event(), ctx.Event()]
    procs = [
        ctx.Process(target=_one_run, args=(str(path), n, go, ev))
        for n, ev in zip((3, 5), started, strict=True)
    ]
    for p in procs:
        p.start()
    for ev in started:
        assert ev.wait(60)
    go.set()  # both accounts began before either writes: the runs overlap
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    data = json.loads(path.read_text())
    assert data["total"]["model_calls"] == 8
    assert data["total"]["prompt_tokens"] == 80
    assert data["wall_time_s"] == 2.0
    assert data["processes"] == 2
    assert len(data["window"]["runs"].split(",")) == 2


def test_a_later_run_replaces_the_file(tmp_path: Path) -> None:
    path = tmp_path / "llm_answer.json"
    first = StageAccount("answer")
    first.record("local/m", cached=False, ok=True)
    first.write(path)
    second = StageAccount("answer")  # starts after the first run finished
    second.record("local/m", cached=True, ok=True)
    second.write(path)
    data = json.loads(path.read_text())
    assert data["total"]["requests"] == 1
    assert data["total"]["cache_hits"] == 1
    assert data["processes"] == 1


def test_rewriting_the_same_account_does_not_double_count(tmp_path: Path) -> None:
    path = tmp_path / "llm_answer.json"
    acc = StageAccount("answer")
    acc.record("local/m", cached=False, ok=True)
    acc.write(path)
    acc.record("local/m", cached=False, ok=True)
    acc.write(path)  # its own earlier file: replaced, not merged
    assert json.loads(path.read_text())["total"]["model_calls"] == 2


def test_a_damaged_or_foreign_file_is_replaced(tmp_path: Path) -> None:
    path = tmp_path / "llm_answer.json"
    path.write_text("{not json")
    acc = StageAccount("answer")
    acc.record("local/m", cached=False, ok=True)
    acc.write(path)
    assert json.loads(path.read_text())["total"]["model_calls"] == 1
    path.write_text(json.dumps({"stage": "judge", "window": {"finished_utc": "9999-01-01"}}))
    acc.write(path)
    assert json.loads(path.read_text())["stage"] == "answer"
