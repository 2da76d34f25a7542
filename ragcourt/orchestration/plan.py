"""The Prefect plan: every concrete call of the stage graph for one params file.

:func:`build_plan` expands the stage graph
(:func:`~ragcourt.orchestration.stage_graph.stage_graph`) into
:class:`StageCall` objects: one per partition (chunking, (chunking, embedder), system, plus a
``combine`` call for a per-system stage), with their inputs and outputs as paths from
:mod:`ragcourt.core.catalog` and ``after`` = the calls producing their inputs.
:func:`plan_for` restricts it to the selected stages.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ragcourt.core import catalog
from ragcourt.core.errors import ConfigError
from ragcourt.orchestration.params import Params, tracked_keys
from ragcourt.orchestration.stage_def import Dep, StageDef
from ragcourt.orchestration.stage_graph import selected_stages, stage_graph


@dataclass(frozen=True)
class StageCall:
    """One call of stage ``stage``'s library function (``fn(params, **kwargs)``) and what it
    reads and writes.

    ``inputs``/``outputs`` are paths relative to the workdir (files or folders); ``params_keys``
    are dotted keys of params.yaml (``chunkings.c256.size``) whose values the call depends on;
    ``after`` names the calls whose outputs it needs (by :attr:`id`); ``models_keys`` are the
    sections of the model registry it resolves models from (the registry file is then one of
    ``inputs``).
    """

    stage: str
    kwargs: tuple[tuple[str, Any], ...] = ()
    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    params_keys: tuple[str, ...] = ()
    after: tuple[str, ...] = ()
    tag: str = ""  # partition label used in the id (defaults to the kwargs' values)
    models_keys: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        label = self.tag or ",".join(_label(v) for _, v in self.kwargs)
        return f"{self.stage}[{label}]" if label else self.stage

    @property
    def file_stem(self) -> str:
        """``id`` made safe as a file name (anything but alphanumerics and ``-_.,`` -> ``_``)."""
        return "".join(ch if ch.isalnum() or ch in "-_.," else "_" for ch in self.id)

    @property
    def call_kwargs(self) -> dict[str, Any]:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.kwargs}


def _label(value: Any) -> str:
    if isinstance(value, tuple | list):
        return "+".join(str(v) for v in value)
    return str(value)


@dataclass
class Plan:
    """The ordered calls plus lookup helpers."""

    calls: list[StageCall] = field(default_factory=list)

    def add(self, call: StageCall) -> StageCall:
        if any(c.id == call.id for c in self.calls):
            raise ConfigError(f"plan: duplicate stage call '{call.id}'")
        missing = [a for a in call.after if a not in self.ids]
        if missing:
            raise ConfigError(f"plan: '{call.id}' waits for unknown call(s) {missing}")
        self.calls.append(call)
        return call

    @property
    def ids(self) -> list[str]:
        return [c.id for c in self.calls]

    def by_stage(self, stage: str) -> list[StageCall]:
        return [c for c in self.calls if c.stage == stage]

    def ids_of(self, stage: str) -> tuple[str, ...]:
        return tuple(c.id for c in self.by_stage(stage))

    def outputs(self) -> list[str]:
        return [o for c in self.calls for o in c.outputs]

    def select(self, until: str | None = None, only: Sequence[str] | None = None) -> Plan:
        """Calls of the stages up to ``until`` (inclusive), or only the stages in ``only``
        (whose ``after`` links to unselected calls are dropped: their outputs must exist)."""
        names = selected_stages(until, only)
        kept = [c for c in self.calls if c.stage in names]
        kept_ids = {c.id for c in kept}
        out = Plan()
        for c in kept:
            out.add(replace(c, after=tuple(a for a in c.after if a in kept_ids)))
        return out


def param_value(params: Params, key: str) -> Any:
    """The JSON value of dotted params ``key`` (one-line ConfigError when absent)."""
    node: Any = params.model_dump(mode="json")
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            raise ConfigError(f"params key '{key}' not found (needed by the stage graph)")
        node = node[part]
    return node


def _values(params: Params, field_name: str) -> list[str]:
    """Every partition value of a field: the chunkings or embedders keys."""
    if field_name == "chunking":
        return list(params.chunkings)
    if field_name == "embedder":
        return list(params.embedders)
    raise ConfigError(f"plan: no value list for partition field '{field_name}'")


def _dep_paths(dep: Dep, params: Params, part: dict[str, str | None]) -> list[str]:
    """The concrete input paths of ``dep`` for a call with partition values ``part``."""
    if dep.unless is not None and param_value(params, dep.unless) is not None:
        return []
    if dep.prompts is not None:
        return [catalog.prompts_file(dep.prompts).as_posix()]
    if dep.param is not None:
        value = param_value(params, dep.param)
        if value is None and dep.optional:
            return []
        return [str(value)]
    assert dep.artifact is not None
    spec = catalog.spec(dep.artifact)
    choices: list[dict[str, str]] = [{}]
    for name, how in dep.bind:
        if how == "*":
            vals = _values(params, name)
        elif how.startswith("$"):
            v = part.get(how[1:])
            if v is None:  # e.g. a BM25 system has no embedder: no embedding input
                return []
            vals = [v]
        elif how.startswith("@"):
            vals = [str(param_value(params, how[1:]))]
        else:
            raise ConfigError(f"plan: bad binding {name}={how!r} of '{dep.artifact}'")
        choices = [{**c, name: v} for c in choices for v in vals]
    return [spec.path_str(**c) for c in choices]


def _fill(keys: Iterable[str], part: dict[str, str | None]) -> tuple[str, ...]:
    return tuple(k.format(**part) for k in keys)


def _call(
    sd: StageDef,
    params: Params,
    part: dict[str, str | None],
    kwargs: tuple[tuple[str, Any], ...],
    outs: Iterable[str],
    producers: dict[str, str],
    tag: str = "",
    extra_inputs: Iterable[str] = (),
) -> StageCall:
    inputs = [p for d in sd.deps for p in _dep_paths(d, params, part)]
    inputs.extend(extra_inputs)
    if sd.models:
        inputs.append(params.llm.models_file)
    inputs = list(dict.fromkeys(inputs))
    after = tuple(dict.fromkeys(producers[i] for i in inputs if i in producers))
    return StageCall(
        sd.name,
        kwargs=kwargs,
        inputs=tuple(inputs),
        outputs=tuple(outs),
        params_keys=_fill(tracked_keys(sd.params), part),
        after=after,
        tag=tag,
        models_keys=sd.models,
    )


SystemEntry = (
    tuple[str, str | None, str | None] | tuple[str, str | None, str | None, tuple[str, ...]]
)


def build_plan(params: Params, systems: Iterable[SystemEntry]) -> Plan:
    """Every concrete call of the stage graph for ``params``, in dependency order.

    ``systems``: ``(name, chunking-or-None, embedder-or-None[, inputs])`` of every configured
    candidate system, in config order (:func:`systems_for_plan`). A ``("system",)`` stage
    runs one call per system (its partitioned outputs, its system's chunking/embedder
    inputs) and then a ``combine`` call that reads every partition and writes the rest.
    """
    systems = list(systems)
    p = Plan()
    producers: dict[str, str] = {}

    ancestors: dict[str, set[str]] = {}

    def add(call: StageCall) -> None:
        # wait only for the nearest producers: drop one that another producer already waits for
        direct = [a for a in call.after if not any(a in ancestors[b] for b in call.after)]
        call = replace(call, after=tuple(direct))
        p.add(call)
        ancestors[call.id] = set(direct).union(*(ancestors[a] for a in direct))
        producers.update(dict.fromkeys(call.outputs, call.id))

    for sd in stage_graph().values():
        if sd.partition == ("system",):
            part_outs = [a for a in sd.writes if "system" in catalog.spec(a).fields]
            rest = [a for a in sd.writes if a not in part_outs]
            partition_paths: list[str] = []
            for entry in systems:
                name, chunking, embedder = entry[0], entry[1], entry[2]
                extra = entry[3] if len(entry) > 3 else ()
                part = {"system": name, "chunking": chunking, "embedder": embedder}
                outs = [catalog.spec(a).path_str(system=name) for a in part_outs]
                partition_paths.extend(outs)
                one = (("systems", (name,)),)
                add(_call(sd, params, part, one, outs, producers, extra_inputs=extra))
            # the combine call reads the stage's unpartitioned inputs and every partition
            combine = replace(sd, deps=tuple(d for d in sd.deps if not d.bind))
            outs = [catalog.spec(a).path_str() for a in rest]
            add(_call(combine, params, {}, (), outs, producers, "combine", partition_paths))
            continue
        fields = sd.partition
        combos: list[dict[str, str | None]] = [{}]
        for f in fields:
            combos = [{**c, f: v} for c in combos for v in _values(params, f)]
        own = [i for e in systems for i in (e[3] if len(e) > 3 else ())] if sd.system_inputs else []
        for part in combos:
            kwargs = tuple((f, part[f]) for f in fields)
            outs = [
                catalog.spec(a).path_str(**{f: str(part[f]) for f in catalog.spec(a).fields})
                for a in sd.writes
            ]
            add(_call(sd, params, part, kwargs, outs, producers, extra_inputs=own))
    return p


def systems_for_plan(params: Params) -> list[tuple[str, str | None, str | None, tuple[str, ...]]]:
    """``(name, chunking, embedder, inputs)`` of every configured system (validated by
    :mod:`ragcourt.answering.systems`): an external system has no chunking/embedder and
    lists the files its answers come from (an answers file, a project module) as inputs."""
    from ragcourt.answering.systems import load_systems

    entries = [s.plan_entry() for s in load_systems(params)]
    return [(e.name, e.chunking, e.embedder, tuple(e.inputs)) for e in entries]


def plan_for(params: Params, until: str | None = None, only: Sequence[str] | None = None) -> Plan:
    """The plan restricted to the selected stages; the systems file is read only when a stage
    that answers the systems (the answer stage, one task per system; the race) is selected."""
    names = selected_stages(until, only)
    graph = stage_graph()
    answering = any(graph[n].partition == ("system",) or graph[n].system_inputs for n in names)
    systems = systems_for_plan(params) if answering else []
    return build_plan(params, systems).select(only=names)


def metrics_path(params: Params, stage: str) -> str:
    return catalog.llm_metrics(params.llm.metrics_dir, stage).as_posix()


def existing(paths: Iterable[str], root: Path) -> list[str]:
    return [p for p in paths if (root / p).exists()]
