"""The stage graph, loaded from the project's ``stages/`` folder.

A project declares its stages in ``stages/<name>/__init__.py`` (one
:class:`~ragcourt.orchestration.stage_def.StageDef` named ``STAGE`` each) and their run order
in ``stages/__init__.py`` (``PIPELINE``). :func:`stage_graph` loads them by file path (no
``sys.path`` edit, nothing imported by a global name), from ``<cwd>/stages`` when the project
has one, else from the ``stages/`` of the checkout ragcourt runs from (the template).
:mod:`~ragcourt.orchestration.plan` expands the graph into Prefect calls,
:mod:`~ragcourt.orchestration.dvc_yaml` renders ``dvc.yaml`` from it, and
``python -m stages <name>`` runs one stage.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from types import ModuleType

from ragcourt.core import catalog
from ragcourt.core.errors import ConfigError
from ragcourt.core.schemas import register_table
from ragcourt.orchestration.project_code import code_root
from ragcourt.orchestration.stage_def import StageDef

STAGES_DIRNAME = "stages"
#: dvc.yaml's first step, ``python -m stages code``: it writes every stage's code digest
#: (:func:`ragcourt.orchestration.code_deps.write_code_digests`); no stage may take the name
CODE_STEP = "code"


def stages_dir(root: Path | None = None) -> Path:
    """``<root>/stages`` (default root: the working directory) when it holds a stage package,
    else the template's (:func:`~ragcourt.orchestration.project_code.code_root`)."""
    return code_root(STAGES_DIRNAME, root) / STAGES_DIRNAME


def _signature(folder: Path) -> tuple[tuple[str, int], ...]:
    """The stage package's files and their modification times: a changed folder is loaded
    afresh (``ragcourt init`` then a new stage, in one process)."""
    files = sorted(folder.rglob("*.py"))
    return tuple((str(f), f.stat().st_mtime_ns) for f in files)


def _load_package(folder: Path, signature: tuple[tuple[str, int], ...]) -> ModuleType:
    """The stage package in ``folder`` under a private module name (one per folder and
    version of its files), so two projects' ``stages`` never shadow each other."""
    digest = hashlib.sha1(repr((str(folder), signature)).encode()).hexdigest()[:12]
    name = f"_ragcourt_stages_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    init = folder / "__init__.py"
    spec = importlib.util.spec_from_file_location(
        name, init, submodule_search_locations=[str(folder)]
    )
    if spec is None or spec.loader is None or not init.is_file():
        raise ConfigError(f"{folder}: no stage package here (run `ragcourt init` to make one)")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def load_stage_graph(folder: Path) -> dict[str, StageDef]:
    """The stages of the package in ``folder``, in its ``PIPELINE`` order; one-line errors
    for a missing folder or ``STAGE``, or a stage whose declared name differs (memoised
    until a file of the folder changes)."""
    return _load_graph(folder, _signature(folder))


@cache
def _load_graph(folder: Path, signature: tuple[tuple[str, int], ...]) -> dict[str, StageDef]:
    package = _load_package(folder, signature)
    order = getattr(package, "PIPELINE", None)
    if not isinstance(order, tuple) or not all(isinstance(n, str) for n in order):
        raise ConfigError(f"{folder / '__init__.py'}: PIPELINE must be a tuple of stage names")
    graph: dict[str, StageDef] = {}
    for name in order:
        if name == CODE_STEP:
            raise ConfigError(f"{folder / '__init__.py'}: '{CODE_STEP}' is reserved, not a stage")
        if not (folder / name / "__init__.py").is_file():
            raise ConfigError(f"{folder / '__init__.py'}: PIPELINE names '{name}', no folder")
        stage = getattr(importlib.import_module(f"{package.__name__}.{name}"), "STAGE", None)
        if not isinstance(stage, StageDef) or stage.name != name:
            raise ConfigError(f"{folder / name / '__init__.py'}: STAGE must be StageDef('{name}')")
        graph[name] = stage
        # a project's own stage: its outputs and tables, for lookups from this project
        catalog.register(folder.parent, *stage.artifacts)
        for table, columns in stage.tables:
            register_table(folder.parent, table, columns)
    return graph


def stage_graph(root: Path | None = None) -> dict[str, StageDef]:
    """The stage graph of the project in ``root`` (default: the working directory)."""
    return load_stage_graph(stages_dir(root).resolve())


def with_upstream(names: Sequence[str], root: Path | None = None) -> list[str]:
    """``names`` and every stage whose artifacts they read, directly or not, in run order."""
    graph = stage_graph(root)
    wanted: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in wanted:
            continue
        if name not in graph:
            raise ConfigError(f"unknown stage '{name}' (stages: {', '.join(graph)})")
        wanted.add(name)
        todo.extend(catalog.spec(d.artifact).stage for d in graph[name].deps if d.artifact)
    return [n for n in graph if n in wanted]


def stage_order(root: Path | None = None) -> tuple[str, ...]:
    """Stage names in run order."""
    return tuple(stage_graph(root))


def selected_stages(until: str | None = None, only: Sequence[str] | None = None) -> list[str]:
    """Stage names chosen by ``until`` (inclusive) or ``only`` (default: all)."""
    order = stage_order()
    if until is not None and only is not None:
        raise ConfigError("give either 'until' or 'only', not both")
    names = list(only) if only is not None else list(order)
    if until is not None:
        if until not in order:
            raise ConfigError(f"unknown stage '{until}' (stages: {', '.join(order)})")
        names = list(order[: order.index(until) + 1])
    unknown = [n for n in names if n not in order]
    if unknown:
        raise ConfigError(f"unknown stage(s) {unknown} (stages: {', '.join(order)})")
    return names
