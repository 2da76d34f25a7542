"""The ragcourt pipeline as a Prefect flow: one task per stage and partition.

``pipeline`` (flow ``ragcourt-pipeline``) builds the stage graph
(:mod:`ragcourt.orchestration.plan`: per chunking, per (chunking, embedder), per system, judge
steps), runs it in the subflow ``ragcourt-stages`` on the task runner named by its ``task_runner``
parameter, then publishes the leaderboard, retrieval summary, DAFE summary and report as Prefect
artifacts.

Each task (:func:`ragcourt.orchestration.stage_tasks.run_stage`) calls the stage's library
function with ``(params, **partition)`` in the workdir, exactly what ``python -m stages
<stage>`` calls under DVC, so both engines read and write the same ``data/`` files. Tasks
are cached on their inputs (:mod:`ragcourt.orchestration.caching`): a re-run skips every call
whose inputs, params and code are unchanged and whose outputs are intact.

Run it: ``ragcourt run --engine prefect`` or
``python -m flows pipeline [--until STAGE]`` from the project root; a deployment's
entrypoint is ``flows/pipeline.py:pipeline``.
"""

from __future__ import annotations

import argparse
import shutil
from contextlib import chdir
from pathlib import Path
from typing import Any, cast

from prefect import flow
from prefect.futures import PrefectFuture, as_completed
from prefect.task_runners import TaskRunner

from ragcourt.core.catalog import DEFAULT_PARAMS_FILE
from ragcourt.core.errors import RagcourtError
from ragcourt.orchestration import progress
from ragcourt.orchestration.caching import STATE_DIR, stage_cache_policy
from ragcourt.orchestration.params import load_params
from ragcourt.orchestration.plan import StageCall, plan_for
from ragcourt.orchestration.runners import make_task_runner
from ragcourt.orchestration.sharding import may_shard, merging_call, shard_calls
from ragcourt.orchestration.stage_graph import selected_stages, stage_order
from ragcourt.orchestration.stage_tasks import accounts_dir, final_state, run_stage


def _completed(futures: list[PrefectFuture[Any]]) -> bool:
    """Wait for ``futures``; True when every one completed (or was cached)."""
    return all(final_state(f).is_completed() for f in futures)


@flow(name="ragcourt-stages", log_prints=True)
def stages_flow(
    params_path: str = DEFAULT_PARAMS_FILE,
    workdir: str = ".",
    until: str | None = None,
    only: list[str] | None = None,
) -> list[dict[str, Any]]:
    """Submit every stage call of the plan with its upstream calls as ``wait_for``; a sharded
    call (:mod:`ragcourt.orchestration.sharding`) is split once its inputs are ready: its
    shards run as tasks of their own (retried ``scale.shard_retries`` times), then the call
    merges them. Fail with one line per failed call (calls behind a failure do not run)."""
    root = Path(workdir).resolve()
    with chdir(root):
        params = load_params(params_path)
        plan = plan_for(params, until=until, only=only)
        policy = stage_cache_policy(root)
        storage = root / STATE_DIR / "results"  # a Path: a local result store, no block
        total = len(plan.calls)
        progress.emit(progress.StageEvent("plan", total=total))

        def submit(
            call: StageCall, wait_for: list[PrefectFuture[Any]], retries: int = 0
        ) -> PrefectFuture[Any]:
            return run_stage.with_options(
                name=f"stage-{call.stage}",
                task_run_name=call.id,
                cache_policy=policy,
                result_storage=storage,
                retries=retries,
            ).submit(call, str(root), params_path, return_state=False, wait_for=wait_for)

        futures: dict[str, PrefectFuture[Any]] = {}  # every submitted call, shards included
        done_by: dict[str, PrefectFuture[Any]] = {}  # plan call id -> the call that ends it
        for call in plan.calls:
            upstream = [done_by[a] for a in call.after]
            shards: list[StageCall] = []
            if may_shard(call, params) and _completed(upstream):
                shards = shard_calls(call, params)
            for shard in shards:
                futures[shard.id] = submit(shard, upstream, params.scale.shard_retries)
            if shards:
                total += len(shards)
                progress.emit(progress.StageEvent("plan", total=total))
            final = merging_call(call, bool(shards))
            waits = upstream + [futures[s.id] for s in shards]
            futures[final.id] = done_by[call.id] = submit(final, waits)
        by_future = {id(f): cid for cid, f in futures.items()}
        try:
            for fut in as_completed(list(futures.values())):
                state = final_state(fut)
                progress.emit(progress.StageEvent("done", by_future[id(fut)], str(state.name)))
        finally:
            shutil.rmtree(accounts_dir(root), ignore_errors=True)
        results: list[dict[str, Any]] = []
        failed: list[str] = []
        for cid, fut in futures.items():
            state = final_state(fut)
            if state.is_completed():
                res = fut.result()
                results.append({**res, "state": state.name})
            else:
                msg = str(state.message or state.name).splitlines()[0]
                failed.append(f"{cid}: {state.name}: {msg}")
        if failed:
            raise RagcourtError("stage calls did not complete:\n  " + "\n  ".join(failed))
        return results


@flow(name="ragcourt-pipeline", log_prints=True)
def pipeline(
    params_path: str = DEFAULT_PARAMS_FILE,
    workdir: str = ".",
    task_runner: str = "thread",
    workers: int = 2,
    dask_address: str | None = None,
    until: str | None = None,
    only: list[str] | None = None,
    publish: bool = True,
) -> list[dict[str, Any]]:
    """Run the pipeline (all stages, those up to ``until``, or ``only`` some) on the named
    task runner (``thread`` or ``dask``), then publish the results of those stages as Prefect
    artifacts."""
    # Flow.with_options takes a runner of the base future type, and TaskRunner is invariant in
    # it (prefect casts the same way for its own default runner).
    runner = cast(
        "TaskRunner[PrefectFuture[Any]]", make_task_runner(task_runner, workers, dask_address)
    )
    results = stages_flow.with_options(task_runner=runner)(
        params_path=params_path, workdir=workdir, until=until, only=only
    )
    if publish:
        from ragcourt.orchestration.artifacts import publish_artifacts

        ran = selected_stages(until, only)  # publish only what this run's stages made
        published = publish_artifacts(Path(workdir).resolve(), params_path, ran)
        print(f"published Prefect artifacts: {', '.join(published) or 'none (no results yet)'}")
    cached = sum(1 for r in results if r["state"] == "Cached")
    print(f"{len(results)} stage calls: {len(results) - cached} ran, {cached} cached")
    return results


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="Run the ragcourt pipeline as a Prefect flow.")
    ap.add_argument("--params", default=DEFAULT_PARAMS_FILE)
    ap.add_argument("--workdir", default=".")
    ap.add_argument("--task-runner", choices=["thread", "dask"], default="thread")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--dask-address", default=None)
    ap.add_argument("--until", choices=stage_order(), default=None)
    ap.add_argument("--only", nargs="+", choices=stage_order(), default=None)
    ap.add_argument("--no-publish", action="store_true")
    args = ap.parse_args(argv)
    pipeline(
        params_path=args.params,
        workdir=args.workdir,
        task_runner=args.task_runner,
        workers=args.workers,
        dask_address=args.dask_address,
        until=args.until,
        only=args.only,
        publish=not args.no_publish,
    )
