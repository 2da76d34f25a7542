"""``ragcourt run`` with both engines on a tiny git + DVC project (ingest and chunking only,
no model), and the one-line errors of run / serve / sweep."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from _tiny_project import make_project, tool_env
from typer.testing import CliRunner

from ragcourt.cli.dvc_runner import stage_count
from ragcourt.cli.main import app

runner = CliRunner()


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    ws = make_project(tmp_path / "p", dvc=True)
    monkeypatch.chdir(ws)
    monkeypatch.setenv("PATH", tool_env()["PATH"])  # dvc.yaml commands call `python`
    return ws


def test_dvc_engine_counts_and_runs_the_stages_up_to_the_target(project: Path) -> None:
    assert stage_count(project, ["chunk"]) == 4  # code, ingest, chunk@c16, chunk@c32
    res = runner.invoke(app, ["run", "--until", "chunk"])
    assert res.exit_code == 0, res.output
    assert "running ingest" in res.output and "running chunk@c32" in res.output
    assert (project / "data/chunks/c16.parquet").is_file()
    assert not (project / "data/embeddings").exists()
    again = runner.invoke(app, ["run", "--until", "chunk"])
    assert again.exit_code == 0 and "running" not in again.output  # all unchanged


@pytest.fixture
def prefect_api_url() -> Iterator[str]:
    from prefect.settings import PREFECT_API_URL
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield str(PREFECT_API_URL.value())


@pytest.mark.slow  # a temporary Prefect server + two CLI processes (~1.5 min on 2 busy cores)
def test_prefect_engine_runs_then_reuses_the_cache(project: Path, prefect_api_url: str) -> None:
    """As a user runs it: the installed CLI in its own process (twice), one Prefect API."""
    env = tool_env() | {"PREFECT_API_URL": prefect_api_url}
    cmd = [sys.executable, "-m", "ragcourt.cli.main", "run", "--engine", "prefect"]
    first = subprocess.run(
        [*cmd, "--until", "chunk"], cwd=project, env=env, capture_output=True, text=True
    )
    assert first.returncode == 0, first.stdout + first.stderr
    assert "3 stage calls: 3 ran, 0 cached" in first.stdout
    again = subprocess.run(
        [*cmd, "--until", "chunk"], cwd=project, env=env, capture_output=True, text=True
    )
    assert "3 stage calls: 0 ran, 3 cached" in again.stdout, again.stdout + again.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "--until", "nosuch"], "unknown stage 'nosuch'"),
        (["serve", "--cron", "99 * * *"], "invalid cron schedule '99 * * *'"),
        (["sweep", "-g", "chunkings.c16.size"], "expected KEY=V1,V2"),
        (["sweep", "-g", "chunkings.c99.size=1,2", "--until", "chunk"], "'c99' is not in"),
    ],
)
def test_user_errors_are_one_line_with_exit_code_2(
    project: Path, args: list[str], message: str
) -> None:
    res = runner.invoke(app, args)
    assert res.exit_code == 2, res.output
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("ragcourt: error:") and message in lines[0]


def test_flow_commands_and_dvc_generate_work_outside_a_checkout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A project without flows/ and stages/ folders runs the template's (the checkout's); a
    project without the package source gets a dvc.yaml without ragcourt/ code deps."""
    ws = make_project(tmp_path / "p")  # params, configs and data only
    monkeypatch.chdir(ws)
    assert not (ws / "ragcourt").exists() and not (ws / "flows").exists()
    res = runner.invoke(app, ["serve", "--cron", "99 * * *"])
    assert res.exit_code == 2 and "invalid cron schedule '99 * * *'" in res.output, res.output
    res = runner.invoke(app, ["sweep", "-g", "chunkings.c99.size=1,2", "--until", "chunk"])
    assert res.exit_code == 2 and "'c99' is not in" in res.output, res.output
    res = runner.invoke(app, ["dvc", "generate"])
    assert res.exit_code == 0, res.output
    stages = yaml.safe_load((ws / "dvc.yaml").read_text())["stages"]
    assert stages["chunk"]["do"]["cmd"] == "python -m stages chunk"
    deps = [d for body in stages.values() for d in (body.get("do") or body).get("deps", [])]
    assert deps and not any(d.startswith("ragcourt") for d in deps)
    assert "deps" not in stages["code"]  # no code in the project: the step runs every time
    assert "my_qa.jsonl" in stages["qagen"]["deps"]  # the project's QA file is a dep of qagen
