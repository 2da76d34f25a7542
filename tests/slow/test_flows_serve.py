"""Scheduling end to end: a real ``prefect server start`` on a free loopback port, the
pipeline deployment registered with a cron schedule and served by ``python -m
flows deployments``, one run triggered through the API and watched
until it completes."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import httpx
import pytest
from _tiny_project import make_project, tool_env

if TYPE_CHECKING:
    from prefect.client.schemas.objects import State
    from prefect.client.schemas.responses import DeploymentResponse

T = TypeVar("T")
DEPLOYMENT = "ragcourt-pipeline/ragcourt-scheduled"
CRON = "17 3 * * 1"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGINT the process group (graceful shutdown), then kill what is left."""
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGINT)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


def _wait_for(
    what: str,
    check: Callable[[], T | None],
    timeout_s: float,
    proc: subprocess.Popen[bytes],
    log: Path,
) -> T:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"{what}: process exited {proc.returncode}:\n{log.read_text()[-3000:]}")
        value = check()
        if value:
            return value
        time.sleep(1.0)
    pytest.fail(f"{what}: not ready after {timeout_s:.0f}s:\n{log.read_text()[-3000:]}")


@pytest.fixture(scope="module")
def server_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    home = tmp_path_factory.mktemp("prefect-home")
    url = f"http://127.0.0.1:{_free_port()}/api"
    env = tool_env() | {
        "PREFECT_HOME": str(home),
        "PREFECT_API_URL": url,
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_SERVER_UI_ENABLED": "false",
        "DO_NOT_TRACK": "1",
    }
    port = url.rsplit(":", 1)[1].split("/")[0]
    log = home / "server.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "prefect",
                "server",
                "start",
                "--host",
                "127.0.0.1",
                "--port",
                port,
            ],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:

        def healthy() -> bool:
            try:
                return httpx.get(f"{url}/health", timeout=2).status_code == 200
            except httpx.HTTPError:
                return False

        _wait_for("prefect server", healthy, 180, proc, log)
        yield env
    finally:
        _stop(proc)


@pytest.mark.slow  # a real Prefect server + a serving process + one flow run: ~1.5 min on 2 cores
def test_cron_deployment_is_served_and_a_triggered_run_completes(
    server_env: dict[str, str], tmp_path: Path
) -> None:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.objects import FlowRun
    from prefect.deployments import run_deployment
    from prefect.settings import PREFECT_API_URL, temporary_settings

    ws = make_project(tmp_path / "p")
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        serve = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "flows",
                "deployments",
                "--cron",
                CRON,
                "--workdir",
                str(ws),
                "--until",
                "chunk",
            ],
            cwd=ws,
            env=server_env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        with temporary_settings({PREFECT_API_URL: server_env["PREFECT_API_URL"]}):
            client = get_client(sync_client=True)

            def deployment() -> DeploymentResponse | None:
                try:
                    return client.read_deployment_by_name(DEPLOYMENT)
                except Exception:
                    return None

            dep = _wait_for("deployment registered", deployment, 180, serve, log)
            schedules = [s.schedule for s in dep.schedules]
            assert [getattr(s, "cron", None) for s in schedules] == [CRON], schedules
            assert dep.parameters["workdir"] == str(ws.resolve())
            assert dep.parameters["until"] == "chunk"

            run = run_deployment(DEPLOYMENT, timeout=0)
            assert isinstance(run, FlowRun)  # the synchronous call returns the run

            def finished() -> State | None:
                state = client.read_flow_run(run.id).state
                return state if state is not None and state.is_final() else None

            state = _wait_for("triggered flow run", finished, 300, serve, log)
            assert state.is_completed(), f"{state.name}: {state.message}\n{log.read_text()[-3000:]}"
    finally:
        _stop(serve)
    assert (ws / "data/documents.parquet").is_file()
    assert (ws / "data/chunks/c16.parquet").is_file() and (ws / "data/chunks/c32.parquet").is_file()
    assert not (ws / "data/embeddings").exists()  # the deployment's until=chunk was honoured
