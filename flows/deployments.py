"""Scheduled Prefect deployments of the pipeline (and, optionally, a sweep), served locally.

``python -m flows deployments --cron "0 3 * * *"`` (or ``ragcourt serve``) registers the
deployment ``ragcourt-pipeline/ragcourt-scheduled`` with that cron schedule on the Prefect API
(``PREFECT_API_URL``, e.g. a ``prefect server start`` on this machine) and serves it: this
process polls for scheduled or UI-triggered runs and executes each in a subprocess, in the
workdir given here. Ctrl-C stops serving (schedules are paused until served again).

The same flows run on a remote work pool with ``flow.from_source(...).deploy(work_pool_name=...)``
instead (see the README's Orchestration section); nothing in the flows depends on serving.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

from prefect import serve
from prefect.deployments.runner import RunnerDeployment
from prefect.types.entrypoint import EntrypointType

from flows.pipeline import pipeline
from flows.sweep import sweep
from ragcourt.core.catalog import DEFAULT_PARAMS_FILE
from ragcourt.core.errors import ConfigError
from ragcourt.orchestration.project_code import child_env
from ragcourt.orchestration.runners import RUNNERS
from ragcourt.orchestration.sweeps import DEFAULT_GRID

PIPELINE_DEPLOYMENT = "ragcourt-scheduled"
SWEEP_DEPLOYMENT = "ragcourt-sweep-scheduled"


def _check_cron(cron: str) -> str:
    """Validate with Prefect's own schedule model (a bad string is a one-line ConfigError)."""
    from prefect.client.schemas.schedules import CronSchedule
    from pydantic import ValidationError

    try:
        CronSchedule(cron=cron)
    except ValidationError:
        raise ConfigError(
            f"invalid cron schedule '{cron}' (five fields, e.g. '0 3 * * *')"
        ) from None
    return cron


def _built(made: RunnerDeployment | Coroutine[Any, Any, RunnerDeployment]) -> RunnerDeployment:
    """``Flow.to_deployment`` is typed sync-or-async; called from sync code it returns the
    deployment itself."""
    if not isinstance(made, RunnerDeployment):
        raise TypeError("to_deployment returned a coroutine outside an event loop")
    return made


def build_deployments(
    workdir: Path,
    params_path: str = DEFAULT_PARAMS_FILE,
    cron: str | None = "0 3 * * *",
    task_runner: str = "thread",
    workers: int = 2,
    until: str | None = None,
    sweep_cron: str | None = None,
    sweep_grid: dict[str, list[Any]] | None = None,
    name: str = PIPELINE_DEPLOYMENT,
) -> list[RunnerDeployment]:
    """The deployments to serve (entrypoints by module path, ``flows.pipeline.pipeline``: the
    processes that run them import the project's ``flows`` package, :func:`serve_deployments`
    puts it on their ``PYTHONPATH``)."""
    if task_runner not in RUNNERS:
        raise ConfigError(f"unknown task runner '{task_runner}' (choose from {RUNNERS})")
    root = str(workdir.resolve())
    deployments = [
        _built(
            pipeline.to_deployment(
                name=name,
                cron=_check_cron(cron) if cron else None,
                parameters={
                    "params_path": params_path,
                    "workdir": root,
                    "task_runner": task_runner,
                    "workers": workers,
                    "until": until,
                },
                description=f"ragcourt pipeline on {root}",
                tags=["ragcourt"],
                entrypoint_type=EntrypointType.MODULE_PATH,
            )
        )
    ]
    if sweep_cron:
        deployments.append(
            _built(
                sweep.to_deployment(
                    name=SWEEP_DEPLOYMENT,
                    cron=_check_cron(sweep_cron),
                    parameters={
                        "grid": sweep_grid or DEFAULT_GRID,
                        "params_path": params_path,
                        "workdir": root,
                    },
                    description=f"ragcourt sweep on {root}",
                    tags=["ragcourt", "ragcourt-sweep"],
                    entrypoint_type=EntrypointType.MODULE_PATH,
                )
            )
        )
    return deployments


def serve_deployments(workdir: Path, **kwargs: Any) -> None:
    """Register the deployments and serve them until interrupted (the flow-run processes it
    starts inherit a ``PYTHONPATH`` holding the project's ``flows/`` and ``stages/``)."""
    deployments = build_deployments(workdir, **kwargs)
    os.environ["PYTHONPATH"] = child_env(workdir.resolve())["PYTHONPATH"]
    serve(*deployments)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="Register and serve scheduled ragcourt deployments.")
    ap.add_argument("--cron", default="0 3 * * *", help="pipeline schedule (default 03:00 daily)")
    ap.add_argument("--workdir", default=".")
    ap.add_argument("--params", default=DEFAULT_PARAMS_FILE)
    ap.add_argument("--task-runner", choices=RUNNERS, default="thread")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--until", default=None)
    ap.add_argument("--sweep-cron", default=None, help="also schedule the default sweep")
    args = ap.parse_args(argv)
    serve_deployments(
        Path(args.workdir),
        params_path=args.params,
        cron=args.cron,
        task_runner=args.task_runner,
        workers=args.workers,
        until=args.until,
        sweep_cron=args.sweep_cron,
    )
