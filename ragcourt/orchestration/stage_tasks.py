"""The Prefect task that runs one stage call, shared by the project's flows (``flows/``).

:func:`run_stage` calls the stage's library function (its declaration in ``stages/``,
:func:`ragcourt.orchestration.stage_graph.stage_graph`) with ``(params, **partition)`` in the
workdir, exactly what ``python -m stages <stage>`` calls under DVC, so both engines read and
write the same ``data/`` files. It lives in the library so that a Dask worker unpickles it by
module name.

LLM accounting (``data/metrics/llm_<stage>.json``): each task counts its model calls in fresh
accounts of its own (``ragcourt.llm.accounting.fresh_accounts``), saved under
``.ragcourt/prefect/accounts/<flow run>/``; the ``combine`` call of a partitioned stage (the
answers) writes the sum over this flow run's partitions that ran, whichever worker ran them.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from prefect import State, task
from prefect.futures import PrefectFuture

from ragcourt.core.allocator import bound_heap
from ragcourt.core.errors import RagcourtError
from ragcourt.core.io import output_set, sweep_stale_temps, write_json
from ragcourt.core.offline import apply as apply_offline
from ragcourt.llm.accounting import fresh_accounts, merge_account_dicts
from ragcourt.orchestration.caching import STATE_DIR, call_key, write_stamp
from ragcourt.orchestration.declared_params import declared_view
from ragcourt.orchestration.params import Params, load_params
from ragcourt.orchestration.plan import StageCall, metrics_path
from ragcourt.orchestration.stage_graph import stage_graph


def _enter(workdir: Path) -> None:
    """Stage code uses cwd-relative paths. Thread-runner tasks already run in the flow's cwd;
    a Dask worker process (one thread) may have started elsewhere and moves once."""
    if Path.cwd().resolve() != workdir:
        os.chdir(workdir)


ACCOUNTS_DIR = STATE_DIR / "accounts"


def accounts_dir(root: Path) -> Path:
    """This flow run's folder of per-call LLM accounts (shared by every worker)."""
    from prefect.runtime import flow_run

    return root / ACCOUNTS_DIR / (flow_run.get_id() or "no-flow-run")


def _record_accounts(call: StageCall, root: Path, params: Params, accounts: dict[str, Any]) -> None:
    """Save this call's accounts; for a ``combine`` call, write the stage's metrics file(s) as
    the sum over the saved accounts of this flow run's calls of the same stage (partitions)."""
    folder = accounts_dir(root)
    mine = {name: acc.as_dict() for name, acc in accounts.items()}
    if mine or call.tag == "combine":
        saved = {"call": call.id, "stage": call.stage, "accounts": mine}
        write_json(saved, folder / f"{call.file_stem}.json")
    if call.tag != "combine":
        return
    parts: dict[str, list[dict[str, Any]]] = {}
    for f in sorted(folder.glob("*.json")):
        saved = json.loads(f.read_text(encoding="utf-8"))
        if saved.get("stage") == call.stage:
            for name, acc in saved["accounts"].items():
                parts.setdefault(name, []).append(acc)
    for name, dicts in parts.items():
        merge_account_dicts(name, dicts).write(root / metrics_path(params, name))


@task(persist_result=True, retries=0)
def run_stage(call: StageCall, workdir: str, params_path: str) -> dict[str, Any]:
    """Run the library function of the stage (declared in ``stages/``) on ``params`` and the call's
    partition, with fresh LLM accounts (temp files a killed run left beside the call's own
    outputs removed first); check and stamp its outputs. The offline defaults and the malloc
    settings are applied first: a Dask worker started by hand has not run an entry point."""
    apply_offline()
    bound_heap()
    root = Path(workdir)
    _enter(root)
    params = load_params(root / params_path)
    sweep_stale_temps(root / o for o in call.outputs)
    key = call_key(call, root, params)
    sd = stage_graph()[call.stage]
    stage_fn = sd.load()
    view = declared_view(params, sd, {k: v for k, v in call.kwargs if isinstance(v, str)})
    start = time.perf_counter()
    with fresh_accounts() as accounts, output_set():
        stage_fn(view, **call.call_kwargs)
    seconds = time.perf_counter() - start
    _record_accounts(call, root, params, accounts)
    missing = [o for o in call.outputs if not (root / o).exists()]
    if missing:
        raise RagcourtError(
            f"{call.id}: stage finished but did not write {missing} "
            "(the plan and the stage disagree on its outputs)"
        )
    outputs = write_stamp(call, root, key)
    return {"call": call.id, "key": key, "seconds": round(seconds, 3), "outputs": outputs}


def final_state(fut: PrefectFuture[Any]) -> State[Any]:
    """The final state (``wait`` first: before it, ``state`` may be a stale API read)."""
    fut.wait()
    return fut.state
