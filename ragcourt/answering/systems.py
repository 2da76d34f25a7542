"""Candidate RAG systems (SPEC 3): declared in ``configs/systems.yaml``, validated against params.

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

A grid expands to the Cartesian product of its factors, in the order written; each system is
named ``<prefix>-<label1>-<label2>...`` (or by the ``name`` template, a ``str.format`` string over
the factor labels). Derived labels: strings are used as written (a model string keeps the part
after the last ``/``), ``top_k: 5`` -> ``k5``, ``fusion: false`` -> ``nofusion``, fusion on ->
``fusion<n>``, ``generator: null`` -> ``default``; other values -> ``<field><value>``.

Normalisation: BM25 ignores the embedder (set to null), so two systems that differ only there
are identical; identical effective configurations under two names are an error (with temperature
0 and a fixed seed they would produce the same answers). ``generator: null`` means ``llm.model``;
``fusion.model: null`` means ``llm.model`` as well (query rewriting is a role like any other), so
systems that differ only in the generator share their retrieval, RAG-Fusion included.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ragcourt.core.errors import ConfigError
from ragcourt.core.params import Params

RetrieverKind = Literal["dense", "bm25", "hybrid"]
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")  # also a safe partition file name
_LABEL_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FusionSpec(_Strict):
    """RAG-Fusion: the LLM writes ``n_variants`` rewrites of the question; the rankings of the
    original and every variant are fused by RRF (score = Σ 1/(rrf_k + rank))."""

    n_variants: int = Field(default=4, ge=1, le=16)
    model: str | None = None  # null -> llm.model
    prompt_version: str = "v1"
    max_tokens: int = Field(default=128, gt=0)


class SystemSpec(_Strict):
    """One candidate system as written in the systems file (before resolving defaults)."""

    name: str
    chunking: str
    embedder: str | None = None
    retriever: RetrieverKind
    top_k: int = Field(default=5, ge=1, le=100)
    fusion: FusionSpec | None = None
    generator: str | None = None  # null -> llm.model
    prompt_version: str = "v1"
    max_tokens: int = Field(default=128, gt=0)

    @field_validator("fusion", mode="before")
    @classmethod
    def _fusion_shorthand(cls, value: Any) -> Any:
        """``fusion: true`` -> defaults, ``fusion: false``/``null`` -> off."""
        if value is True:
            return {}
        if value is False:
            return None
        return value

    @field_validator("name")
    @classmethod
    def _name_is_file_safe(cls, value: str) -> str:
        if not NAME_RE.match(value):
            raise ValueError(
                f"system name '{value}' must match {NAME_RE.pattern} "
                "(it names the partition file data/answers/systems/<name>.parquet)"
            )
        return value

    @model_validator(mode="after")
    def _embedder_needed(self) -> SystemSpec:
        if self.retriever in ("dense", "hybrid") and self.embedder is None:
            raise ValueError(f"retriever '{self.retriever}' needs an embedder")
        return self


class GridSpec(_Strict):
    """A product of factors over a base configuration."""

    prefix: str | None = None
    name: str | None = None  # str.format template over factor labels, e.g. "{retriever}-{top_k}"
    base: dict[str, Any] = Field(default_factory=dict)
    factors: dict[str, Any]  # field -> list of levels, or {label: level}


class SystemsFile(_Strict):
    defaults: dict[str, Any] = Field(default_factory=dict)
    systems: list[dict[str, Any]] = Field(default_factory=list)
    grids: list[GridSpec] = Field(default_factory=list)


@dataclass(frozen=True)
class RetrievalKey:
    """What fixes a system's retrieved passages: systems with equal keys share one retrieval."""

    chunking: str
    embedder: str | None
    retriever: RetrieverKind
    depth: int  # ranking depth computed; a system keeps its first top_k
    fusion_variants: int  # 0 = no RAG-Fusion
    fusion_model: str | None
    fusion_prompt_version: str | None
    fusion_max_tokens: int | None

    @property
    def label(self) -> str:
        emb = f"__{self.embedder}" if self.embedder else ""
        fus = f"+fusion{self.fusion_variants}" if self.fusion_variants else ""
        return f"{self.chunking}{emb}/{self.retriever}@{self.depth}{fus}"


@dataclass(frozen=True)
class System:
    """A validated system with every default resolved (models are concrete strings)."""

    spec: SystemSpec
    generator_model: str
    retrieval: RetrievalKey

    @property
    def name(self) -> str:
        return self.spec.name

    def describe(self) -> dict[str, Any]:
        """The resolved configuration as plain data (hashed for the partition freshness check)."""
        return {
            **self.spec.model_dump(mode="json"),
            "generator_model": self.generator_model,
            "retrieval_depth": self.retrieval.depth,
            "fusion_model": self.retrieval.fusion_model,
        }


# --------------------------------------------------------------------------------------------
# YAML with duplicate keys rejected


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate mapping keys (plain YAML silently keeps the last)."""


def _construct_unique_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node)
        if key in seen:
            raise ConfigError(f"line {key_node.start_mark.line + 1}: duplicate key '{key}'")
        seen.add(key)
    return dict(loader.construct_mapping(node))


_UniqueKeyLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
    _construct_unique_mapping,
)


def _read_yaml(path: Path) -> Any:
    if not path.is_file():
        raise ConfigError(f"{path}: systems file not found (params key 'systems_file')")
    try:
        return yaml.load(path.read_text(encoding="utf-8"), Loader=_UniqueKeyLoader)
    except ConfigError as err:
        raise ConfigError(f"{path}: {err}") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" line {mark.line + 1}:" if mark is not None else ""
        raise ConfigError(f"{path}:{where} invalid YAML: {getattr(err, 'problem', err)}") from None


def _first_error(err: ValidationError) -> str:
    first = err.errors()[0]
    loc = ".".join(str(p) for p in first["loc"]) or "<root>"
    msg = "unknown key" if first["type"] == "extra_forbidden" else first["msg"]
    return f"key '{loc}': {msg}"


# --------------------------------------------------------------------------------------------
# Grid expansion


def factor_label(field: str, value: Any) -> str:
    """Readable label of one factor level (see module docstring for the rules)."""
    if field == "fusion":
        if value in (False, None):
            return "nofusion"
        n = value.get("n_variants", 4) if isinstance(value, Mapping) else 4
        return f"fusion{n}"
    if value is None:
        return "default"
    if isinstance(value, bool):
        return f"{field}{'on' if value else 'off'}"
    if isinstance(value, str):
        text = value.rsplit("/", 1)[-1]
    elif field == "top_k":
        text = f"k{value}"
    else:
        text = f"{field}{value}"
    return _LABEL_UNSAFE.sub("_", text).strip("_") or field


def _factor_levels(where: str, field: str, levels: Any) -> list[tuple[str, Any]]:
    if isinstance(levels, Mapping):
        pairs = [(str(label), value) for label, value in levels.items()]
    elif isinstance(levels, list):
        pairs = [(factor_label(field, value), value) for value in levels]
    else:
        raise ConfigError(f"{where}: factor '{field}' must be a list or a label -> value mapping")
    if not pairs:
        raise ConfigError(f"{where}: factor '{field}' has no levels")
    labels = [label for label, _ in pairs]
    dup = sorted({lab for lab in labels if labels.count(lab) > 1})
    if dup:
        raise ConfigError(
            f"{where}: factor '{field}' has levels with the same label {dup}; "
            "give explicit labels with the mapping form {label: value}"
        )
    return pairs


def expand_grid(grid: GridSpec, defaults: Mapping[str, Any], where: str) -> list[dict[str, Any]]:
    """The raw system dicts of a grid: base merged with one level of every factor."""
    known = set(SystemSpec.model_fields) - {"name"}
    if not grid.factors:
        raise ConfigError(f"{where}: a grid needs at least one factor")
    for field in grid.factors:
        if field not in known:
            raise ConfigError(f"{where}: unknown factor '{field}' (system fields: {sorted(known)})")
    if "name" in grid.base:
        raise ConfigError(f"{where}: 'base' may not set a name (names come from the factors)")
    fields = list(grid.factors)
    level_lists = [_factor_levels(where, f, grid.factors[f]) for f in fields]
    out: list[dict[str, Any]] = []
    for combo in itertools.product(*level_lists):
        labels = {f: label for f, (label, _) in zip(fields, combo, strict=True)}
        if grid.name is not None:
            try:
                name = grid.name.format(**labels)
            except (KeyError, IndexError, ValueError) as err:
                raise ConfigError(
                    f"{where}: name template '{grid.name}' refers to {err}, "
                    f"not one of the factors {fields}"
                ) from None
        else:
            name = "-".join([*([grid.prefix] if grid.prefix else []), *labels.values()])
        raw = {**defaults, **grid.base, "name": name}
        raw.update({f: value for f, (_, value) in zip(fields, combo, strict=True)})
        out.append(raw)
    return out


# --------------------------------------------------------------------------------------------
# Validation against params


def _resolve(spec: SystemSpec, params: Params, where: str) -> System:
    if spec.chunking not in params.chunkings:
        raise ConfigError(
            f"{where}: unknown chunking '{spec.chunking}' "
            f"(params chunkings: {sorted(params.chunkings)})"
        )
    if spec.retriever == "bm25":
        spec = spec.model_copy(update={"embedder": None})  # BM25 never uses the embedder
    elif spec.embedder not in params.embedders:
        raise ConfigError(
            f"{where}: unknown embedder '{spec.embedder}' "
            f"(params embedders: {sorted(params.embedders)})"
        )
    fusion = spec.fusion
    depth = max(params.retrieval.depth, spec.top_k)
    key = RetrievalKey(
        chunking=spec.chunking,
        embedder=spec.embedder,
        retriever=spec.retriever,
        depth=depth,
        fusion_variants=fusion.n_variants if fusion else 0,
        fusion_model=params.llm.resolve(fusion.model) if fusion else None,
        fusion_prompt_version=fusion.prompt_version if fusion else None,
        fusion_max_tokens=fusion.max_tokens if fusion else None,
    )
    return System(spec=spec, generator_model=params.llm.resolve(spec.generator), retrieval=key)


def _check_local_models(systems: list[System], params: Params, source: Path) -> None:
    """``local/<name>`` models must be in the model registry (hosted strings go to litellm)."""
    from ragcourt.core.model_registry import load_registry

    local = [
        (s.name, m)
        for s in systems
        for m in (s.generator_model, s.retrieval.fusion_model)
        if m is not None and m.startswith("local/")
    ]
    if not local:
        return
    registry = load_registry(params.llm.models_file)
    for name, model in local:
        if model.removeprefix("local/") not in registry.llms:
            raise ConfigError(
                f"{source}: system '{name}': local model '{model}' is not in "
                f"{params.llm.models_file} (known: {sorted(registry.llms)})"
            )


def effective_config(system: System) -> dict[str, Any]:
    """``describe()`` without the name, with the raw ``generator`` / ``fusion.model`` strings
    replaced by the models they resolve to (``null`` and the default model are the same)."""
    cfg = {k: v for k, v in system.describe().items() if k != "name"}
    cfg["generator"] = system.generator_model
    if cfg.get("fusion") is not None:
        cfg["fusion"] = {**cfg["fusion"], "model": system.retrieval.fusion_model}
    return cfg


def _check_prompts(systems: list[System], source: Path, prompts_dir: Path | None) -> None:
    from ragcourt.core.prompts import prompt

    for s in systems:
        v = s.spec.prompt_version
        versions = {(n, v) for n in ("answer_system", "answer_user", "passage", "no_passages")}
        if s.spec.fusion:  # the RAG-Fusion query writer reads both (answer.py, rag_fusion.py)
            versions |= {
                (n, s.spec.fusion.prompt_version) for n in ("variants_system", "variants_user")
            }
        for name, version in sorted(versions):
            try:
                prompt("answer", name, version, prompts_dir)
            except ConfigError as err:
                raise ConfigError(f"{source}: system '{s.name}': {err}") from None


def parse_systems(
    data: Any,
    params: Params,
    source: Path | str,
    *,
    check_models: bool = True,
    prompts_dir: Path | None = None,
) -> list[System]:
    """Validate a loaded systems mapping; every problem is a ConfigError naming system and file."""
    source = Path(source)
    if not isinstance(data, Mapping):
        raise ConfigError(f"{source}: top level must be a mapping with 'systems' and/or 'grids'")
    try:
        doc = SystemsFile.model_validate(data)
    except ValidationError as err:
        raise ConfigError(f"{source}: {_first_error(err)}") from None

    raws: list[tuple[str, dict[str, Any]]] = []
    for i, raw in enumerate(doc.systems):
        label = f"system '{raw['name']}'" if isinstance(raw.get("name"), str) else f"systems[{i}]"
        raws.append((label, {**doc.defaults, **raw}))
    for i, grid in enumerate(doc.grids):
        where = f"{source}: grids[{i}]" + (f" ('{grid.prefix}')" if grid.prefix else "")
        for raw in expand_grid(grid, doc.defaults, where):
            raws.append((f"grids[{i}] system '{raw['name']}'", raw))
    if not raws:
        raise ConfigError(f"{source}: no systems declared (add 'systems' or 'grids')")

    systems: list[System] = []
    for label, raw in raws:
        try:
            spec = SystemSpec.model_validate(raw)
        except ValidationError as err:
            raise ConfigError(f"{source}: {label}: {_first_error(err)}") from None
        systems.append(_resolve(spec, params, f"{source}: {label}"))

    by_name: dict[str, System] = {}
    by_config: dict[str, str] = {}
    for s in systems:
        if s.name in by_name:
            raise ConfigError(f"{source}: duplicate system name '{s.name}'")
        by_name[s.name] = s
        cfg = repr(sorted((k, repr(v)) for k, v in effective_config(s).items()))
        if cfg in by_config:
            raise ConfigError(
                f"{source}: systems '{by_config[cfg]}' and '{s.name}' have the same "
                "configuration (BM25 ignores the embedder); remove one"
            )
        by_config[cfg] = s.name
    if check_models:
        _check_local_models(systems, params, source)
    _check_prompts(systems, source, prompts_dir)
    return systems


def load_systems(params: Params, path: Path | str | None = None, **kw: Any) -> list[System]:
    """Read, expand and validate the systems file (default: ``params.systems_file``)."""
    source = Path(path or params.systems_file)
    return parse_systems(_read_yaml(source), params, source, **kw)


def group_by_retrieval(systems: list[System]) -> dict[RetrievalKey, list[System]]:
    """Systems sharing a retrieval key, in config order (retrieval runs once per group)."""
    groups: dict[RetrievalKey, list[System]] = {}
    for s in systems:
        groups.setdefault(s.retrieval, []).append(s)
    return groups
