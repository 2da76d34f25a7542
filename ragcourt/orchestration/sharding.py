"""A stage call's shards as calls of their own (the Prefect flow's fan-out).

A stage whose declaration names a ``shards`` function (:attr:`StageDef.shards`) and whose
shard size (:attr:`StageDef.shard_size`, a ``scale.*`` key) is above 0 is split when its
inputs are ready: the function lists the call's shards from those inputs (the questions, the
answers), each becomes a :class:`~ragcourt.orchestration.plan.StageCall` with the shard's
keyword arguments and its own output files, and the call itself runs after them and merges
them (for a stage without a ``combine`` call of its own it is tagged ``combine``, so its LLM
metrics are the sum over the shards). Under DVC the same call computes its shards in-process.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

from ragcourt.core.errors import RagcourtError
from ragcourt.core.shards import Shard
from ragcourt.orchestration.params import Params
from ragcourt.orchestration.plan import StageCall, param_value
from ragcourt.orchestration.stage_graph import stage_graph

log = logging.getLogger("ragcourt.sharding")


def may_shard(call: StageCall, params: Params) -> bool:
    """True when ``call``'s stage lists shards and its shard size is above 0 (the flow then
    waits for the call's inputs before it submits it)."""
    sd = stage_graph()[call.stage]
    return sd.shards is not None and int(param_value(params, sd.shard_size)) > 0


def shard_calls(call: StageCall, params: Params) -> list[StageCall]:
    """The shard calls of ``call`` (its inputs exist): none when the stage lists none for it.
    A listing that fails (an input unreadable) leaves the call unsharded: it then fails, or
    not, with the stage's own one-line error."""
    fn = stage_graph()[call.stage].load_shards()
    if fn is None:
        return []
    try:
        listed: list[Shard] = fn(params, **call.call_kwargs)
    except (RagcourtError, OSError) as err:
        log.warning("%s: shards not listed (%s); running it unsharded", call.id, err)
        return []
    out = []
    for shard in listed:
        kwargs: dict[str, Any] = dict(call.kwargs) | dict(shard.kwargs)
        out.append(
            replace(call, kwargs=tuple(kwargs.items()), outputs=shard.outputs, tag=shard.label)
        )
    return out


def merging_call(call: StageCall, sharded: bool) -> StageCall:
    """The call itself, run after its shards: tagged ``combine`` (sums the shards' LLM
    accounts) unless the plan has a combine call of its stage already (per-system stages)."""
    if not sharded or call.tag or "system" in stage_graph()[call.stage].partition:
        return call
    return replace(call, tag="combine")
