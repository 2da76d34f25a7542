"""Concurrent accounting writers: two processes running one stage at once must not overwrite each
other's ``llm_<stage>.json``; a later, sequential run replaces the file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from ragcourt.llm.accounting import StageAccount

ROOT = Path(__file__).resolve().parents[3]
# One stage process: its account starts, says so, waits for "go", makes N model calls, writes.
CHILD = """
import sys, time
from pathlib import Path
from ragcourt.llm.accounting import StageAccount
path, calls, flags = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3])
acc = StageAccount("answer")
(flags / f"started-{calls}").touch()
deadline = time.monotonic() + 60
while not (flags / "go").exists() and time.monotonic() < deadline:
    time.sleep(0.01)
for _ in range(calls):
    acc.record("local/m", cached=False, ok=True, prompt_tokens=10, latency_s=0.5)
acc.add_wall_time(1.0)
acc.write(path)
"""


def test_two_concurrent_processes_add_up_their_counts(tmp_path: Path) -> None:
    path = tmp_path / "metrics" / "llm_answer.json"
    flags = tmp_path / "flags"
    flags.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, str(path), str(n), str(flags)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in (3, 5)
    ]
    deadline = time.monotonic() + 120
    while len(list(flags.glob("started-*"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    (flags / "go").touch()  # both accounts began before either writes: the runs overlap
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
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
