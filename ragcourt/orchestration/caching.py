"""Input-keyed caching of stage tasks: a Prefect cache policy plus output stamps.

Cache key of a stage call = sha256 over (stage, partition kwargs, the values of its params keys,
the content hash of every declared input file or folder, the source of every ``ragcourt`` module
its function imports and its declaration: :func:`ragcourt.orchestration.code_deps.code_digest`,
the digest DVC tracks too). Same inputs -> same key -> Prefect returns the stored result and
the stage does not run.

Prefect cannot see whether the files a cached call wrote are still there (someone may have
deleted ``data/`` or overwritten it with ``dvc checkout``). So after a run the task writes a
stamp ``.ragcourt/prefect/stamps/<call>.json`` = {key, sha256 of each output}; the policy
returns the key only when the stamp matches both the key and the outputs on disk, and otherwise
a one-off key that forces the call to run. Dropping the stamp check would let a re-run "skip"
a stage whose outputs are gone.
"""

from __future__ import annotations

import json
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prefect.cache_policies import INPUTS, TASK_SOURCE, CachePolicy
from prefect.context import TaskRunContext
from prefect.utilities.hashing import hash_objects

from ragcourt.core.errors import ConfigError
from ragcourt.core.fingerprint import MISSING, object_sha256, path_sha256
from ragcourt.core.io import write_json
from ragcourt.orchestration.code_deps import code_digest as stage_code_digest
from ragcourt.orchestration.params import Params, load_params
from ragcourt.orchestration.plan import StageCall
from ragcourt.orchestration.stage_graph import stage_graph

STATE_DIR = Path(".ragcourt/prefect")


def params_subset(params: Params, keys: tuple[str, ...]) -> dict[str, Any]:
    """The values of dotted ``keys`` (``chunkings.c256``) as plain JSON data."""
    data = params.model_dump(mode="json")
    out: dict[str, Any] = {}
    for key in keys:
        node: Any = data
        for part in key.split("."):
            if not isinstance(node, dict) or part not in node:
                raise ConfigError(f"params key '{key}' not found (needed by the stage graph)")
            node = node[part]
        out[key] = node
    return out


_code_memo: dict[str, str] = {}
_code_lock = threading.Lock()  # also serialises ast.parse: CPython 3.11's is not thread-safe


def code_digest(stage: str) -> str:
    """:func:`ragcourt.orchestration.code_deps.code_digest` of ``stage``, memoised for the
    process (a flow's calls of one stage share it)."""
    with _code_lock:
        if stage not in _code_memo:
            _code_memo[stage] = stage_code_digest(stage)
        return _code_memo[stage]


def call_key(call: StageCall, workdir: Path, params: Params) -> str:
    """The input key of ``call`` (see the module docstring)."""
    payload = {
        "stage": call.stage,
        "kwargs": [[k, list(v) if isinstance(v, tuple) else v] for k, v in call.kwargs],
        "params": params_subset(params, call.params_keys),
        "inputs": {p: path_sha256(workdir / p) for p in call.inputs},
        "code": code_digest(call.stage),
    }
    graph = stage_graph()
    volatile = graph[call.stage].load_volatile() if call.stage in graph else None
    if volatile is not None:  # what the outputs depend on beyond files and params (environment)
        payload["volatile"] = volatile(params)
    return object_sha256(payload)


def stamp_path(call: StageCall, workdir: Path) -> Path:
    return workdir / STATE_DIR / "stamps" / f"{call.file_stem}.json"


def output_digests(call: StageCall, workdir: Path) -> dict[str, str]:
    return {p: path_sha256(workdir / p) for p in call.outputs}


def write_stamp(call: StageCall, workdir: Path, key: str) -> dict[str, str]:
    """Record that ``call`` with input key ``key`` produced the outputs now on disk."""
    outs = output_digests(call, workdir)
    write_json({"call": call.id, "key": key, "outputs": outs}, stamp_path(call, workdir))
    return outs


def stamp_matches(call: StageCall, workdir: Path, key: str) -> bool:
    """True when the stamp says ``key`` produced exactly the outputs on disk now."""
    path = stamp_path(call, workdir)
    if not path.is_file():
        return False
    try:
        stamp = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return False
    outs = output_digests(call, workdir)
    return stamp.get("key") == key and MISSING not in outs.values() and stamp.get("outputs") == outs


@dataclass
class StageInputs(CachePolicy):
    """Cache policy of a stage task (reads its ``call``/``workdir``/``params_path`` inputs).

    ``K`` = hash of Prefect's INPUTS and TASK_SOURCE keys and :func:`call_key`. Returns ``K``
    when the stamp says these inputs produced the outputs now on disk (a stored record under
    ``K`` then makes Prefect skip the run), or when no record under ``K`` exists yet (the task
    runs and its record is stored under ``K``). Otherwise - a record under ``K`` exists but the
    outputs on disk are not what it made (deleted, or overwritten by another run) - a one-off
    key makes the task run; the stamp it writes makes the record under ``K`` valid again.
    """

    def compute_key(
        self,
        task_ctx: TaskRunContext,
        inputs: dict[str, Any],
        flow_parameters: dict[str, Any],
        **kwargs: Any,
    ) -> str | None:
        call: StageCall = inputs["call"]
        workdir = Path(inputs["workdir"])
        params = load_params(workdir / inputs["params_path"])
        artifacts = call_key(call, workdir, params)
        key = hash_objects(
            INPUTS.compute_key(task_ctx, inputs, flow_parameters),
            TASK_SOURCE.compute_key(task_ctx, inputs, flow_parameters),
            artifacts,
            raise_on_failure=True,
        )
        assert key is not None
        if stamp_matches(call, workdir, artifacts):
            return key
        store = getattr(task_ctx, "result_store", None)
        if store is not None and store.exists(key):
            return f"{key}-rerun-{uuid.uuid4().hex}"
        return key


def stage_cache_policy(workdir: Path) -> CachePolicy:
    """:class:`StageInputs` with its cache records kept in the workdir."""
    return StageInputs().configure(key_storage=workdir.resolve() / STATE_DIR / "cache")
