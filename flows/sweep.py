"""The parameter sweep as a Prefect flow (``ragcourt-sweep``, ``ragcourt sweep``).

Each grid point runs the pipeline flow in its own workspace, as a child process
(:mod:`ragcourt.orchestration.sweeps`: grids, workspaces, the point task and the summary);
:func:`run_sweep` validates the grid first. Run it: ``python -m flows sweep -g KEY=V1,V2``
from the project root; a deployment's entrypoint is ``flows/sweep.py:sweep``.
"""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from prefect import flow
from prefect.artifacts import create_table_artifact
from prefect.futures import PrefectFuture, as_completed

from ragcourt.core import catalog
from ragcourt.core.errors import RagcourtError
from ragcourt.core.io import write_parquet, write_text
from ragcourt.orchestration import progress
from ragcourt.orchestration.stage_graph import selected_stages
from ragcourt.orchestration.sweeps import (
    DEFAULT_GRID,
    SWEEPS_DIR,
    grid_points,
    parse_grid,
    point_name,
    prepare_workspace,
    run_point,
    summary_frame,
    validate_grid,
)
from ragcourt.reporting.model import Table


@flow(name="ragcourt-sweep", log_prints=True)
def sweep(
    grid: dict[str, list[Any]] | None = None,
    params_path: str = catalog.DEFAULT_PARAMS_FILE,
    workdir: str = ".",
    until: str = "retrieval_eval",
    max_parallel: int = 1,
    name: str | None = None,
) -> dict[str, Any]:
    """Fan out over the grid (``max_parallel`` points at once; a progress event per finished
    point), then summarise."""
    grid = grid or DEFAULT_GRID
    selected_stages(until=until)
    root = Path(workdir).resolve()
    name = name or datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    out_dir = root / SWEEPS_DIR / name
    points = grid_points(grid)
    spaces = {
        point_name(p): prepare_workspace(root, params_path, p, out_dir / point_name(p))
        for p in points
    }
    print(f"sweep {name}: {len(points)} points in {out_dir}")
    progress.emit(progress.StageEvent("plan", total=len(points)))
    point_task = run_point.with_options(tags=["ragcourt-sweep"])
    futures: dict[str, PrefectFuture[dict[str, Any]]] = {}
    names: dict[int, str] = {}
    in_flight: list[PrefectFuture[dict[str, Any]]] = []

    def finished(fut: PrefectFuture[dict[str, Any]]) -> None:
        in_flight.remove(fut)
        fut.wait()
        progress.emit(progress.StageEvent("done", names[id(fut)], str(fut.state.name)))

    for n, ws in spaces.items():  # at most max_parallel point processes at once
        while len(in_flight) >= max(1, max_parallel):
            finished(next(as_completed(list(in_flight))))
        futures[n] = point_task.submit(n, str(ws), catalog.DEFAULT_PARAMS_FILE, until)
        names[id(futures[n])] = n
        in_flight.append(futures[n])
    for fut in as_completed(list(in_flight)):
        finished(fut)
    rows: list[dict[str, Any]] = []
    failed: list[str] = []
    for p in points:
        n = point_name(p)
        fut = futures[n]
        fut.wait()
        if fut.state.is_completed():
            metrics = fut.result()
        else:
            first = str(fut.state.message or fut.state.name).splitlines()[0]
            failed.append(first)
            metrics = {"error": first}
        rows.append({"point": n, **p, **metrics})
    df = summary_frame(rows)
    write_parquet(df, out_dir / "sweep_summary.parquet")
    table = Table.from_frame(df)
    write_text(f"# Sweep {name}\n\n{table.markdown()}\n", out_dir / "sweep_summary.md")
    create_table_artifact(
        table=df.to_dicts(),
        key="ragcourt-sweep-summary",
        description=f"Sweep {name}: {len(points)} points over {', '.join(grid)}",
    )
    if failed:
        raise RagcourtError(f"{len(failed)} sweep point(s) failed: " + "; ".join(failed))
    return {
        "path": str(out_dir / "sweep_summary.md"),
        "columns": table.columns,
        "rows": table.rows,
    }


def run_sweep(**kwargs: Any) -> dict[str, Any]:
    """Validate the stage name and every grid point's params, then run the sweep flow (a bad
    grid is a one-line error before any flow or workspace exists)."""
    grid = kwargs.get("grid") or DEFAULT_GRID
    selected_stages(until=kwargs.get("until", "retrieval_eval"))
    validate_grid(
        Path(kwargs.get("workdir", ".")),
        kwargs.get("params_path", catalog.DEFAULT_PARAMS_FILE),
        grid,
    )
    summary: dict[str, Any] = sweep(**kwargs)
    return summary


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="Run a parameter sweep as a Prefect flow.")
    ap.add_argument("--grid", "-g", action="append", default=None, help="KEY=V1,V2,...")
    ap.add_argument("--params", default=catalog.DEFAULT_PARAMS_FILE)
    ap.add_argument("--until", default="retrieval_eval")
    ap.add_argument("--max-parallel", type=int, default=1)
    ap.add_argument("--name", default=None)
    args = ap.parse_args(argv)
    grid = parse_grid(args.grid) if args.grid else DEFAULT_GRID
    out = run_sweep(
        grid=grid,
        params_path=args.params,
        until=args.until,
        max_parallel=args.max_parallel,
        name=args.name,
    )
    print(f"sweep summary: {out['path']}")
