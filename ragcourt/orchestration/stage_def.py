"""The shape of one pipeline stage: :class:`StageDef` (what it runs, reads, writes, which
params keys and command-line options it takes) and :class:`Dep` (one of its inputs).

The stages themselves are declared in the project's ``stages/<name>/`` folders (loaded by
:mod:`ragcourt.orchestration.stage_graph`); both engines (DVC through
``python -m stages <name>``, Prefect through :mod:`ragcourt.orchestration.plan`) call
:meth:`StageDef.load`'s function.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from ragcourt.core import catalog
from ragcourt.core.errors import ConfigError
from ragcourt.orchestration.params import Params

LLMS, EMBEDDERS = "llms", "embedders"  # sections of the model registry (llm.models_file)


@dataclass(frozen=True)
class Dep:
    """One input of a stage, declared once for both engines; exactly one of:

    - ``artifact``: a catalog name; ``bind`` maps each partition field of its template to
      ``"$field"`` (the call's own partition value), ``"*"`` (every value; DVC depends on the
      artifact's folder) or ``"@dotted.key"`` (the value of a params key);
    - ``param``: a params key whose value is a path (corpus folder, systems file, a user file);
      ``optional``: it may be null (then no input; dvc.yaml lists the file only when the
      params it is generated from set the key);
    - ``prompts``: the prompt file of a stage family.

    ``unless``: a params key; when it is set (not null) a Prefect call does not read this input.
    """

    artifact: str | None = None
    bind: tuple[tuple[str, str], ...] = ()
    param: str | None = None
    optional: bool = False
    prompts: str | None = None
    unless: str | None = None


def art(name: str, *, unless: str | None = None, **bind: str) -> Dep:
    """An artifact input: ``art("chunks", chunking="$chunking")``."""
    return Dep(artifact=name, bind=tuple(bind.items()), unless=unless)


def arts(*names: str) -> tuple[Dep, ...]:
    """Unpartitioned artifact inputs."""
    return tuple(Dep(artifact=n) for n in names)


@dataclass(frozen=True)
class EntryOption:
    """A command-line option of the stage entry (``--<name>``), passed to the stage function
    as keyword ``name`` (dashes become underscores). ``nargs="+"`` takes a list;
    ``requires``: another option that must be given with this one."""

    name: str
    help: str
    metavar: str | None = None
    nargs: str | None = None
    requires: str | None = None

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")


@dataclass(frozen=True)
class StageDef:
    """A pipeline stage, the same name in DVC, Prefect and the CLI.

    ``function``: ``module:function`` called as ``fn(params, **partition)``. ``partition``:
    the fields one call covers (``("chunking", "embedder")``; ``("system",)`` is the
    per-system fan-out of the answer stage, which DVC runs as one stage and Prefect as one
    call per system plus ``combine``). ``params``: params keys (``{chunking}`` is filled per
    partition). What it writes comes from the catalog (:attr:`outs`, :attr:`metrics`: the
    artifacts whose stage it is). ``llm_metrics``: it writes ``llm_<name>.json``.
    ``options``: extra options of its command-line entry.
    """

    name: str
    function: str
    description: str
    deps: tuple[Dep, ...] = ()
    params: tuple[str, ...] = ()
    models: tuple[str, ...] = ()
    partition: tuple[str, ...] = ()
    llm_metrics: bool = False
    options: tuple[EntryOption, ...] = ()
    #: a project's own stage: the catalog entries of what it writes, the schemas of its tables
    #: (name -> {column: dtype}) and the pydantic model of its settings
    #: (``stage_params.<name>`` in params.yaml, tracked as a params key of the stage)
    artifacts: tuple[catalog.Artifact, ...] = ()
    tables: tuple[tuple[str, dict[str, Any]], ...] = ()
    settings: type[BaseModel] | None = None
    #: "module:function" returning JSON data the outputs depend on beyond files and params (the
    #: environment): Prefect hashes the data into the call's key; for DVC, ``ragcourt run``
    #: refreshes the stage's output first when the data changed (e.g. llm_routes.refresh)
    volatile: str | None = None
    #: "module:function" listing a call's shards (``fn(params, **call_kwargs)`` ->
    #: :class:`ragcourt.core.shards.Shard` list; empty: the call is not sharded). The flow runs
    #: each shard as a task of its own (``fn(params, **call_kwargs, **shard.kwargs)``), then the
    #: call itself, which merges them; under DVC the call computes its shards in-process
    shards: str | None = None
    #: the params key of its shard size (0: the flow does not ask ``shards`` for a list)
    shard_size: str = "scale.shard_questions"
    #: it answers the configured systems itself (the race): the files external systems answer
    #: from (answers files, modules) are its inputs too, as they are the answer stage's
    system_inputs: bool = False

    def __post_init__(self) -> None:
        if self.settings is not None and self.settings_key not in self.params:
            object.__setattr__(self, "params", (*self.params, self.settings_key))

    @property
    def settings_key(self) -> str:
        """Where its own settings live in params.yaml."""
        return f"stage_params.{self.name}"

    def read_settings(self, params: Params) -> BaseModel:
        """Its ``stage_params.<name>`` validated by :attr:`settings` (defaults for what is
        unset); a one-line ConfigError naming the key and field."""
        if self.settings is None:
            raise ConfigError(f"stage '{self.name}' declares no settings model")
        try:
            return self.settings.model_validate(params.stage_params.get(self.name, {}))
        except ValidationError as err:
            first = err.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise ConfigError(f"{self.settings_key}.{where}: {first['msg']}") from None

    @property
    def command(self) -> str:
        """The DVC command: the project's stage entry with this stage's name."""
        return f"python -m stages {self.name}"

    @property
    def outs(self) -> tuple[str, ...]:
        """The catalog artifacts it writes, summaries (metrics) excepted."""
        return tuple(a.name for a in catalog.produced_by(self.name, metric=False))

    @property
    def metrics(self) -> tuple[str, ...]:
        """The summaries it writes, which DVC keeps in git uncached."""
        return tuple(a.name for a in catalog.produced_by(self.name, metric=True))

    @property
    def summary(self) -> str:
        """The first sentence of the description."""
        return " ".join(self.description.split()).split(". ")[0].rstrip(".") + "."

    @property
    def writes(self) -> tuple[str, ...]:
        """Every catalog artifact the stage writes (outs and metrics)."""
        return (*self.outs, *self.metrics)

    @property
    def modules(self) -> tuple[str, ...]:
        """The modules its results come from: the function's (and the volatile data's)."""
        names = [self.function, *([self.volatile] if self.volatile else [])]
        return tuple(dict.fromkeys(n.partition(":")[0] for n in names))

    def load(self) -> Callable[..., Any]:
        """The stage function (imports its module)."""
        return _load(self.function)

    def load_volatile(self) -> Callable[..., Any] | None:
        """The function returning the environment data, or None."""
        return _load(self.volatile) if self.volatile else None

    def load_shards(self) -> Callable[..., Any] | None:
        """The function listing a call's shards, or None (never sharded)."""
        return _load(self.shards) if self.shards else None


def _load(target: str) -> Callable[..., Any]:
    module, _, attr = target.partition(":")
    fn: Callable[..., Any] = getattr(importlib.import_module(module), attr)
    return fn
