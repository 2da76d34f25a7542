"""Candidate RAG systems (spec §3): declared in ``configs/systems.yaml``, validated against params.

A system = chunking × embedder × retriever (dense / bm25 / hybrid RRF) × optional RAG-Fusion
(n LLM query variants, rankings fused by RRF) × top-k × generator model × prompt version.

File layout (unknown keys are errors; YAML duplicate keys are errors)::

    defaults: {chunking: c256, embedder: minilm}       # merged under every system / grid base
    systems:                                           # a list, so duplicate names are caught
      - {name: dense-k5, retriever: dense, top_k: 5}
      - {name: dense-k5-fusion4, retriever: dense, top_k: 5, fusion: {n_variants: 4}}
    grids:                                             # products of factors (DICE Table 1 style)
      - prefix: dice
        base: {retriever: dense}
        factors:
          embedder: [minilm, mpnet]                    # list: labels derived from the values
          chunking: [c256, c512]
          generator: {big: openai/gpt-4o-mini, small: null}   # mapping: label -> value

Grids: :mod:`ragcourt.answering.grids`.

Loading is the job of this module; the parts live in modules of their own:

* the syntax of entries and of the file: :mod:`ragcourt.answering.system_specs` (external
  systems: :mod:`ragcourt.answering.external.specs`), YAML with duplicate keys refused:
  :mod:`ragcourt.answering.systems_yaml`;
* system kinds: an entry's ``kind`` (default ``builtin``; ``answers: shuffled`` is kind
  ``shuffled``) names a :class:`~ragcourt.answering.system_registry.SystemKind` of
  :data:`~ragcourt.answering.system_registry.SYSTEM_KINDS`, one module each in
  :mod:`ragcourt.answering.system_kinds` (``builtin``, ``shuffled``, ``answers_file``,
  ``python``, ``http``). ``defaults`` apply to (and grids expand) kinds with
  ``takes_defaults`` only, i.e. built-in systems; an entry's ``kind`` is never a default;
* control systems from ``params.controls``: :mod:`ragcourt.answering.controls`.

Identical effective configurations under two names are an error (with temperature 0 and a
fixed seed they would produce the same answers). Every system's ``control`` is its control
kind, None for a real system.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ragcourt.answering.candidate_system import LIST_COLUMNS, CandidateSystem, PlanEntry
from ragcourt.answering.controls import param_controls
from ragcourt.answering.grids import expand_grid
from ragcourt.answering.params import AnsweringView
from ragcourt.answering.retrieval_key import RetrievalKey
from ragcourt.answering.system_kinds.builtin import (
    System,
    builtin_systems,
    check_local_models,
    check_prompts,
)
from ragcourt.answering.system_kinds.external import ExternalSystem, external_systems
from ragcourt.answering.system_kinds.shuffled import ShuffledSystem
from ragcourt.answering.system_registry import SYSTEM_KINDS, ParseContext, kind_of
from ragcourt.answering.system_specs import SystemsFile, first_error
from ragcourt.answering.systems_yaml import load_yaml_text, read_systems_yaml
from ragcourt.core.errors import ConfigError
from ragcourt.core.names import case_collision

__all__ = [
    "LIST_COLUMNS",
    "CandidateSystem",
    "ExternalSystem",
    "PlanEntry",
    "RetrievalKey",
    "ShuffledSystem",
    "System",
    "builtin_systems",
    "external_systems",
    "group_by_retrieval",
    "list_row",
    "load_systems",
    "load_yaml_text",
    "parse_systems",
    "self_answering",
]


def _kind(raw: Mapping[str, Any], where: str) -> str:
    return SYSTEM_KINDS.check(kind_of(raw), f"{where}: key 'kind'")


def parse_systems(
    data: Any,
    params: AnsweringView,
    source: Path | str,
    *,
    check_models: bool = True,
    prompts_dir: Path | None = None,
) -> list[CandidateSystem]:
    """Validate a loaded systems mapping; every problem is a ConfigError naming system and file."""
    source = Path(source)
    if not isinstance(data, Mapping):
        raise ConfigError(f"{source}: top level must be a mapping with 'systems' and/or 'grids'")
    try:
        doc = SystemsFile.model_validate(data)
    except ValidationError as err:
        raise ConfigError(f"{source}: {first_error(err)}") from None
    if "kind" in doc.defaults:
        raise ConfigError(
            f"{source}: key 'defaults.kind': defaults apply to built-in systems only; "
            "write 'kind' on each external system"
        )

    raws: list[tuple[str, str, dict[str, Any]]] = []
    for i, raw in enumerate(doc.systems):
        name = raw.get("name")
        label = f"system {name!r}" if isinstance(name, str) else f"systems[{i}]"
        kind = _kind(raw, f"{source}: {label}")
        merged = {**doc.defaults, **raw} if SYSTEM_KINDS.get(kind, "kind").takes_defaults else raw
        raws.append((label, kind, dict(merged)))
    for i, grid in enumerate(doc.grids):
        where = f"{source}: grids[{i}]" + (f" ({grid.prefix!r})" if grid.prefix else "")
        kind = _kind(grid.base, where)
        if not SYSTEM_KINDS.get(kind, "kind").takes_defaults:
            raise ConfigError(f"{where}: key 'base.kind': grids expand built-in systems only")
        for raw in expand_grid(grid, doc.defaults, where, params.limits.max_systems):
            raws.append((f"grids[{i}] system {raw['name']!r}", kind, raw))
        if len(raws) > params.limits.max_systems:  # the grids so far, added up
            raise ConfigError(
                f"{source}: {len(raws):,} systems, over limits.max_systems "
                f"({params.limits.max_systems:,}); raise it in params.yaml"
            )
    if not raws:
        raise ConfigError(f"{source}: no systems declared (add 'systems' or 'grids')")

    systems: list[CandidateSystem] = []
    for label, kind, raw in raws:
        ctx = ParseContext(params, source, label, tuple(systems))
        try:
            systems.append(SYSTEM_KINDS.get(kind, "kind").parse(raw, ctx))
        except ValidationError as err:
            raise ConfigError(f"{source}: {label}: {first_error(err)}") from None
    systems.extend(param_controls(systems, params, source))

    by_name: dict[str, CandidateSystem] = {}
    by_config: dict[str, str] = {}
    for s in systems:
        if s.name in by_name:
            raise ConfigError(f"{source}: duplicate system name '{s.name}'")
        by_name[s.name] = s
        cfg = f"{s.kind}:{s.config_key()}"
        if cfg in by_config:
            why = "" if s.is_external else " (BM25 ignores the embedder)"
            raise ConfigError(
                f"{source}: systems '{by_config[cfg]}' and '{s.name}' have the same "
                f"configuration{why}; remove one"
            )
        by_config[cfg] = s.name
    pair = case_collision(by_name)
    if pair is not None:
        raise ConfigError(
            f"{source}: system names '{pair[0]}' and '{pair[1]}' differ only in case "
            "(they name partition files)"
        )
    builtin = builtin_systems(systems)
    if check_models:
        check_local_models(builtin, params, source)
    check_prompts(builtin, source, prompts_dir)
    return systems


def load_systems(
    params: AnsweringView, path: Path | str | None = None, **kw: Any
) -> list[CandidateSystem]:
    """Read, expand and validate the systems file (default: ``params.systems_file``)."""
    source = Path(path or params.systems_file)
    return parse_systems(read_systems_yaml(source), params, source, **kw)


def list_row(system: CandidateSystem) -> dict[str, str]:
    """One row of ``ragcourt systems list`` (keys :data:`LIST_COLUMNS`; no secrets)."""
    return system.list_row()


def self_answering(systems: Sequence[CandidateSystem]) -> list[CandidateSystem]:
    """Systems that answer by themselves (:meth:`CandidateSystem.answer`), in answer order
    (stable: config order within one order), e.g. external systems, then shuffled controls."""
    return sorted((s for s in systems if s.answer_order > 0), key=lambda s: s.answer_order)


def group_by_retrieval(systems: Sequence[CandidateSystem]) -> dict[RetrievalKey, list[System]]:
    """Built-in systems sharing a retrieval key, in config order (retrieval runs once per
    group); systems of other kinds retrieve by themselves and are in no group."""
    groups: dict[RetrievalKey, list[System]] = {}
    for s in builtin_systems(systems):
        groups.setdefault(s.retrieval, []).append(s)
    return groups
