"""Task runners by name: the flow's ``task_runner`` parameter picks one.

``thread`` (default): Prefect's ThreadPoolTaskRunner in the flow's process; the local LLM is
loaded once and shared. ``dask``: prefect-dask's DaskTaskRunner on a ``distributed.LocalCluster``
of ``workers`` single-threaded, non-daemonic worker processes (stages run truly in parallel,
each worker loads its own models, and may start processes of its own). ``dask`` with
``address`` connects to an existing Dask scheduler instead.
"""

from __future__ import annotations

from typing import Literal

from prefect.task_runners import TaskRunner, ThreadPoolTaskRunner

from ragcourt.core.errors import ConfigError

RunnerKind = Literal["thread", "dask"]
RUNNERS: tuple[str, ...] = ("thread", "dask")


def make_task_runner(
    kind: str = "thread", workers: int = 2, address: str | None = None
) -> TaskRunner:
    """A fresh task runner of ``kind`` (``workers`` threads or Dask worker processes)."""
    if workers < 1:
        raise ConfigError(f"task runner: workers must be >= 1, got {workers}")
    if kind == "thread":
        return ThreadPoolTaskRunner(max_workers=workers)
    if kind == "dask":
        from prefect_dask.task_runners import DaskTaskRunner

        if address:
            return DaskTaskRunner(address=address)
        import dask

        # the nannies start non-daemonic workers, so a stage may start processes of its own
        # (ingest parses each file in a child process with a time and memory budget)
        dask.config.set({"distributed.worker.daemon": False})
        return DaskTaskRunner(
            cluster_class="distributed.LocalCluster",
            cluster_kwargs={
                "n_workers": workers,
                "threads_per_worker": 1,
                "processes": True,
                "dashboard_address": None,
            },
        )
    raise ConfigError(f"unknown task runner '{kind}' (choose from {', '.join(RUNNERS)})")
