"""Several processes share one reply cache: concurrent writes and one call per request."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from ragcourt.llm.cache import ReplyCache

N_KEYS = 400


# Every key, written by each worker (same content for a shared key); reads interleave with the
# other process's writes. Fresh interpreters, not fork: the test process may hold threads.
_WRITER = """
import sys
from ragcourt.llm.cache import ReplyCache

folder, worker, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
cache = ReplyCache(folder)
for i in (range(n) if worker == 0 else reversed(range(n))):
    cache.set(f"{i:064x}", {"text": f"reply {i}", "prompt_tokens": i})
    hit = cache.get(f"{i:064x}")
    assert hit is not None and hit["text"] == f"reply {i}", i
cache.close()
"""


def test_two_processes_write_many_keys_concurrently(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    args = [sys.executable, "-c", _WRITER, str(tmp_path / "c")]
    procs = [
        subprocess.Popen([*args, str(w), str(N_KEYS)], env=env, stderr=subprocess.PIPE, text=True)
        for w in (0, 1)
    ]
    errors = [p.communicate(timeout=300)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], errors
    cache = ReplyCache(tmp_path / "c")
    for i in range(N_KEYS):
        hit = cache.get(f"{i:064x}")
        assert hit is not None and hit["text"] == f"reply {i}" and hit["prompt_tokens"] == i
    report = cache.verify()
    assert report.entries_ok == N_KEYS and report.entries_damaged == 0 and not cache.moved_aside
    cache.close()


_CALLER = """
import sys, time
from pathlib import Path
from ragcourt.llm.params import LLMParams
from ragcourt.llm import ChatRequest, Gateway
from _llm_testing import scripted_model

cache_dir, calls_file, go, ready = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4]

def reply(msgs):
    with calls_file.open("a") as fh:
        fh.write("call\\n")
    return "the one reply"

params = LLMParams(cache_dir=cache_dir, metrics_dir=cache_dir + "-metrics")
with scripted_model("shared", reply, delay_s=1.5) as m:
    req = ChatRequest.of(m.model, None, "the same question")
    Path(ready).touch()
    while not go.exists():
        time.sleep(0.01)
    [res] = Gateway(params, stage="t_shared").chat([req])
print(res.ok, res.cached, res.text)
"""


def test_same_uncached_request_in_two_processes_calls_the_model_once_scripted_model(
    tmp_path: Path,
) -> None:
    calls, go = tmp_path / "calls.txt", tmp_path / "go"
    ready = [tmp_path / "ready-1", tmp_path / "ready-2"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path.cwd()), *sys.path])}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _CALLER, str(tmp_path / "cache"), str(calls), str(go), str(r)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for r in ready
    ]
    deadline = time.monotonic() + 240
    while not all(r.exists() for r in ready) and time.monotonic() < deadline:
        time.sleep(0.05)
    go.touch()  # both start the call at about the same time (each waits for this file)
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    lines = sorted(out.strip().splitlines()[-1] for out, _ in outs)
    assert lines == ["True False the one reply", "True True the one reply"], outs
    assert calls.read_text().count("call") == 1
