"""The live race as a Prefect flow: the ``race`` stage and the stages it reads (ingest, chunk,
the indexes, the LLM routes, qagen), submitted as the pipeline flow submits them, so the same
task caching and task runners (threads, a Dask cluster) apply and ``dvc repro race`` reads
and writes the same files.

Run it: ``python -m flows race [--task-runner dask --dask-address tcp://...]`` from the
project root; a deployment's entrypoint is ``flows/race.py:race``.
"""

from __future__ import annotations

import argparse
from typing import Any

from prefect import flow

from flows.pipeline import pipeline
from ragcourt.core.catalog import DEFAULT_PARAMS_FILE
from ragcourt.orchestration.stage_graph import with_upstream


@flow(name="ragcourt-race", log_prints=True)
def race(
    params_path: str = DEFAULT_PARAMS_FILE,
    workdir: str = ".",
    task_runner: str = "thread",
    workers: int = 2,
    dask_address: str | None = None,
) -> list[dict[str, Any]]:
    """The race stage and its upstream stages (:func:`with_upstream`), on the named runner."""
    return pipeline(
        params_path=params_path,
        workdir=workdir,
        task_runner=task_runner,
        workers=workers,
        dask_address=dask_address,
        only=with_upstream(["race"]),
        publish=False,
    )


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="Run the adaptive race as a Prefect flow.")
    ap.add_argument("--params", default=DEFAULT_PARAMS_FILE)
    ap.add_argument("--workdir", default=".")
    ap.add_argument("--task-runner", choices=["thread", "dask"], default="thread")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--dask-address", default=None)
    args = ap.parse_args(argv)
    race(
        params_path=args.params,
        workdir=args.workdir,
        task_runner=args.task_runner,
        workers=args.workers,
        dask_address=args.dask_address,
    )
