"""Sharded answer, judge and judge_retrieval on a tiny project (real MiniLM, the tiny local LLM
answering, bring-your-own QA): the same tables whatever the shard size and the engine (Prefect
threads, DVC's in-process entry, a real Dask scheduler with two worker processes), a worker
killed during ``answer``, and a stage killed mid-way that resumes with only its missing shards.

``latency_s`` (a measurement) and ``cached`` (whether a reply came from the reply cache) of the
answers are left out of the comparisons. Every other value is the same, to the bit: judges that
embed texts embed each one in a batch of its own, so a score does not depend on the texts
embedded beside it (a shard's are a subset of the whole run's).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import yaml
from _tiny_project import make_project, tool_env

from flows.pipeline import pipeline
from ragcourt.core import catalog

STAGES = ["answer", "judge", "judge_retrieval"]
TABLES = ("answers", "verdicts", "correctness", "relevance", "passage_utility", "udcg")
MEASURED = ("latency_s", "cached")  # differ between two runs of the same answers


@pytest.fixture(scope="module", autouse=True)
def prefect_api() -> Iterator[None]:
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield


@pytest.fixture(scope="module", autouse=True)
def judging_kinds_loaded() -> None:
    """Load the judging registries' built-in kinds before threads share them: judge and
    judge_retrieval tasks run at once, and a registry's first load is not thread-safe."""
    from ragcourt.core.registry import Registry
    from ragcourt.judging import vocabulary

    for value in vars(vocabulary).values():
        if isinstance(value, Registry):
            value.kinds()


def _set_params(ws: Path, **scale: int) -> None:
    data = yaml.safe_load((ws / "params.yaml").read_text())
    data["judge"]["arbitrator"] = "ref_similarity"  # no 1.5B model in the test
    data["scale"] = {"shard_questions": 0, "shard_retries": 2} | scale
    (ws / "params.yaml").write_text(yaml.safe_dump(data, sort_keys=False))


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project with everything the answer stage reads (one chunking, five systems with the
    controls, three questions)."""
    ws = make_project(tmp_path_factory.mktemp("sharded") / "base", chunkings={"c16": (16, 2)})
    _set_params(ws)
    pipeline(workdir=str(ws), until="qagen", publish=False)
    return ws


def _copy(base: Path, dest: Path, **scale: int) -> Path:
    shutil.copytree(base, dest)
    _set_params(dest, **scale)
    return dest


@pytest.fixture(scope="module")
def reference(upstream: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The three stages unsharded on the thread runner (copies are made from ``upstream``,
    so no run replays another's replies)."""
    ws = _copy(upstream, tmp_path_factory.mktemp("ref") / "p")
    pipeline(workdir=str(ws), only=STAGES, publish=False)
    return ws


def _table(ws: Path, name: str) -> pl.DataFrame:
    df = pl.read_parquet(ws / catalog.spec(name).template)
    return df.drop([c for c in MEASURED if c in df.columns])


def _floats(series: pl.Series) -> pl.Series | None:
    """The float values of a Float64 or List(Float64) column (flattened), else None."""
    if series.dtype == pl.Float64:
        return series
    if series.dtype == pl.List(pl.Float64):
        return series.explode()
    return None


def assert_same_outputs(ws: Path, ref: Path) -> None:
    """The tables of ``ref``: every row and value the same, floats to the bit (module
    docstring); a difference names the table, the column and the largest float gap."""
    for name in TABLES:
        got, want = _table(ws, name), _table(ref, name)
        assert got.columns == want.columns and got.height == want.height, name
        for col in got.columns:
            a, b = _floats(got[col]), _floats(want[col])
            gap = None if a is None or b is None else (a - b).abs().max()
            assert got[col].equals(want[col]), (name, col, gap)


def _states(results: list[dict[str, Any]]) -> dict[str, str]:
    return {r["call"]: r["state"] for r in results}


def test_sharded_flow_and_in_process_stages_equal_the_unsharded_run(
    upstream: Path, reference: Path, tmp_path: Path
) -> None:
    ws = _copy(upstream, tmp_path / "flow", shard_questions=2)
    states = _states(pipeline(workdir=str(ws), only=STAGES, publish=False))
    # two question blocks per built-in system; the shuffled control answers by itself
    assert {"answer[dense-k3#0]", "answer[dense-k3#1]", "answer[bm25-k3#1]"} <= set(states)
    assert {"judge[dense-k3#1]", "judge[combine]", "judge_retrieval[#1]"} <= set(states)
    assert not any(c.startswith("answer[shuffled") and "#" in c for c in states)
    assert set(states.values()) == {"Completed"}
    assert_same_outputs(ws, reference)
    shards = sorted(p.relative_to(ws).as_posix() for p in (ws / "data/judge/shards").rglob("*.*"))
    assert "data/judge/shards/judge/verdicts/dense-k3/00001.parquet" in shards
    assert "data/judge/shards/judge_retrieval/udcg/00001.parquet" in shards


@pytest.fixture(scope="module")
def sharded(upstream: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The three stages with one question per shard through DVC's entry (``python -m stages``,
    what ``dvc repro`` runs): every shard in-process."""
    ws = _copy(upstream, tmp_path_factory.mktemp("dvc") / "p", shard_questions=1)
    for stage in STAGES:
        _stage(ws, stage)
    return ws


def test_dvc_entry_runs_the_shards_in_process(sharded: Path, reference: Path) -> None:
    assert (sharded / "data/answers/shards/bm25-k3/00002.parquet").is_file()
    assert (sharded / "data/judge/shards/judge/verdicts/bm25-k3/00002.parquet").is_file()
    assert_same_outputs(sharded, reference)


def _stage(ws: Path, stage: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "stages", stage],
        cwd=ws,
        env=tool_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def test_a_killed_stage_resumes_with_only_its_missing_shards(
    upstream: Path, sharded: Path, tmp_path: Path
) -> None:
    """SIGKILL ``python -m stages answer`` once some shards are written; the rerun writes only
    the shards that were missing and ends with the unsharded run's tables."""
    ws = _copy(upstream, tmp_path / "p", shard_questions=1)
    shards = ws / "data/answers/shards"
    proc = subprocess.Popen(
        [sys.executable, "-m", "stages", "answer"], cwd=ws, env=tool_env(), start_new_session=True
    )
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and len(list(shards.rglob("0*.parquet"))) < 2:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    before = {p: p.stat().st_mtime_ns for p in shards.rglob("0*.parquet")}
    assert 2 <= len(before) < 12, before  # 4 built-in systems x 3 blocks, killed mid-way
    _stage(ws, "answer")
    after = {p: p.stat().st_mtime_ns for p in shards.rglob("0*.parquet")}
    assert len(after) == 12
    assert {p: after[p] for p in before} == before  # finished shards were not redone
    for stage in STAGES[1:]:
        _stage(ws, stage)
    assert_same_outputs(ws, sharded)


class DaskCluster:
    """``dask scheduler`` and ``dask worker`` processes on loopback, one thread each."""

    def __init__(self, folder: Path, workers: int) -> None:
        self.file = folder / "scheduler.json"
        env = tool_env()
        common = ["--host", "127.0.0.1"]
        self.scheduler = self._start(
            ["scheduler", *common, "--port", "0", "--no-dashboard"], folder, env
        )
        deadline = time.monotonic() + 120
        while not self.file.is_file() and time.monotonic() < deadline:
            time.sleep(0.1)
        self.workers = [
            self._start(
                ["worker", *common, "--nthreads", "1", "--no-nanny", "--no-dashboard"],
                folder,
                env,
            )
            for _ in range(workers)
        ]
        from distributed import Client

        with Client(scheduler_file=str(self.file), timeout=120) as client:  # type: ignore[no-untyped-call]
            client.wait_for_workers(workers, timeout=180)
            self.address: str = client.scheduler.address

    def _start(self, args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
        dask = Path(sys.executable).parent / "dask"
        extra = ["--scheduler-file", str(self.file)]
        return subprocess.Popen([str(dask), *args, *extra], cwd=cwd, env=env)

    def stop(self) -> None:
        for proc in [*self.workers, self.scheduler]:
            if proc.poll() is None:
                proc.terminate()
        for proc in [*self.workers, self.scheduler]:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[DaskCluster]:
    folder = tmp_path / "cluster"
    folder.mkdir()
    running = DaskCluster(folder, workers=2)
    try:
        yield running
    finally:
        running.stop()


def test_dask_scheduler_and_workers_give_the_in_process_outputs(
    upstream: Path, sharded: Path, cluster: DaskCluster, tmp_path: Path
) -> None:
    ws = _copy(upstream, tmp_path / "p", shard_questions=1)
    results = pipeline(
        workdir=str(ws),
        only=STAGES,
        task_runner="dask",
        dask_address=cluster.address,
        publish=False,
    )
    assert set(_states(results).values()) == {"Completed"}
    assert_same_outputs(ws, sharded)


def test_a_worker_killed_during_answer_still_gives_identical_outputs(
    upstream: Path, sharded: Path, cluster: DaskCluster, tmp_path: Path
) -> None:
    ws = _copy(upstream, tmp_path / "p", shard_questions=1)
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["results"] = pipeline(
                workdir=str(ws),
                only=STAGES,
                task_runner="dask",
                dask_address=cluster.address,
                publish=False,
            )
        except BaseException as err:  # reported by the assertion below
            outcome["error"] = err

    flow = threading.Thread(target=run)
    flow.start()
    shards = ws / "data/answers/shards"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not list(shards.rglob("0*.parquet")):
        time.sleep(0.05)
    victim = cluster.workers[0]
    victim.send_signal(signal.SIGKILL)  # mid-answer: the other shards are still to come
    victim.wait()
    flow.join(timeout=600)
    assert "error" not in outcome, outcome.get("error")
    written = len(list(shards.rglob("0*.parquet")))
    assert written == 12
    assert set(_states(outcome["results"]).values()) == {"Completed"}
    assert_same_outputs(ws, sharded)


def _embed_copy(base: Path, dest: Path, **scale: int) -> Path:
    """A copy whose embedder streams 4 chunks at a time (so the flow embeds again)."""
    ws = _copy(base, dest, **scale)
    data = yaml.safe_load((ws / "params.yaml").read_text())
    for spec in data["embedders"].values():
        spec["stream_chunks"] = 4
    (ws / "params.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return ws


def test_embed_shards_on_the_flow_give_the_unsharded_bytes(upstream: Path, tmp_path: Path) -> None:
    """embed in shards of 4 chunks, each a task of the flow, then the merging call: the
    embeddings tables are the unsharded run's, byte for byte."""
    ref = _embed_copy(upstream, tmp_path / "whole")
    pipeline(workdir=str(ref), only=["embed"], publish=False)
    ws = _embed_copy(upstream, tmp_path / "sharded", shard_chunks=4)
    states = _states(pipeline(workdir=str(ws), only=["embed"], publish=False))
    assert any(c.startswith("embed[") and "#1" in c for c in states), states
    assert set(states.values()) == {"Completed"}
    tables = sorted((ref / "data/embeddings").glob("*.parquet"))
    assert tables
    for table in tables:
        assert (ws / "data/embeddings" / table.name).read_bytes() == table.read_bytes(), table.name
