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

External systems (the user's own RAG application): an entry with ``kind: answers_file``,
``kind: python`` or ``kind: http`` (syntax: :mod:`ragcourt.answering.external.specs`) becomes an
:class:`ExternalSystem`; ``kind: builtin`` is the default, so entries without ``kind`` (and
their config hashes) are unchanged. ``defaults`` apply to built-in systems only and may not set
``kind``; grids expand built-in systems only. :func:`load_systems` returns both kinds in config
order (:data:`AnySystem`); :meth:`System.plan_entry` / :meth:`ExternalSystem.plan_entry` give
the stage graph what it needs of either.

Control systems (issue 13; their rules: :mod:`ragcourt.answering.control_retrieval` and
:mod:`ragcourt.answering.shuffled`): a built-in system with ``retriever: oracle`` (the chunks
holding the ground-truth span), ``random`` (k random chunks, seeded per question) or ``none``
(closed book) - control retrievers use no embedder and no RAG-Fusion; and an entry
``{name: ..., answers: shuffled, base: <system>}`` (:class:`ShuffledSystem`: the base system's
answer to another question; the base must be declared before it). ``params.controls.kinds``
adds ``control-<kind>`` systems built on ``controls.base`` (null: the first built-in system).
Every system's ``control`` is its control kind, None for a real system.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ragcourt.answering.external.inputs import input_paths
from ragcourt.answering.external.specs import (
    KINDS_EXTERNAL,
    AnswersFileSpec,
    ExternalSpec,
    HttpSpec,
    PythonSpec,
)
from ragcourt.answering.names import check_system_name
from ragcourt.core.errors import ConfigError
from ragcourt.core.names import case_collision
from ragcourt.core.params import Params
from ragcourt.core.provenance import external_model

SearchKind = Literal["dense", "bm25", "hybrid"]  # retrievers with an index
RetrieverKind = Literal["dense", "bm25", "hybrid", "oracle", "random", "none"]
CONTROL_RETRIEVERS = ("oracle", "random", "none")
CONTROL_PREFIX = "control-"
_LABEL_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
BUILTIN = "builtin"
KINDS = (BUILTIN, *KINDS_EXTERNAL)
_EXTERNAL_SPECS: dict[str, type[ExternalSpec]] = {
    "answers_file": AnswersFileSpec,
    "python": PythonSpec,
    "http": HttpSpec,
}


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
        return check_system_name(value)

    @model_validator(mode="after")
    def _embedder_needed(self) -> SystemSpec:
        if self.retriever in ("dense", "hybrid") and self.embedder is None:
            raise ValueError(f"retriever '{self.retriever}' needs an embedder")
        if self.retriever in CONTROL_RETRIEVERS and self.fusion is not None:
            raise ValueError(f"control retriever '{self.retriever}' takes no fusion")
        return self


class ShuffledSpec(_Strict):
    """A shuffled-answers control: ``base``'s answer to a different question (a derangement)."""

    name: str
    answers: Literal["shuffled"]
    base: str

    @field_validator("name")
    @classmethod
    def _name_is_file_safe(cls, value: str) -> str:
        return check_system_name(value)


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
class PlanEntry:
    """What the stage graph needs of one system: its answer task reads the chunks (and, with
    an embedder, the index) of ``chunking`` (None for an external system) plus ``inputs``
    (paths relative to the project root: an external system's answers file, module, ...)."""

    name: str
    chunking: str | None
    embedder: str | None
    inputs: tuple[str, ...] = ()


@dataclass(frozen=True)
class System:
    """A validated built-in system with every default resolved (models are concrete strings)."""

    spec: SystemSpec
    generator_model: str
    retrieval: RetrievalKey
    is_external: ClassVar[bool] = False

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def kind(self) -> str:
        return BUILTIN

    @property
    def chunking(self) -> str:
        return self.spec.chunking

    @property
    def embedder(self) -> str | None:
        return self.spec.embedder

    def llm_models(self) -> tuple[str, ...]:
        """Models this system calls through the gateway (generator, RAG-Fusion query model)."""
        fusion = self.retrieval.fusion_model
        return (self.generator_model, *([fusion] if fusion is not None else []))

    @property
    def control(self) -> str | None:
        """``oracle`` / ``random`` / ``none`` for a control retriever, else None."""
        r = self.spec.retriever
        return r if r in CONTROL_RETRIEVERS else None

    def plan_entry(self) -> PlanEntry:
        return PlanEntry(self.name, self.spec.chunking, self.spec.embedder)

    def describe(self) -> dict[str, Any]:
        """The resolved configuration as plain data (hashed for the partition freshness check)."""
        return {
            **self.spec.model_dump(mode="json"),
            "generator_model": self.generator_model,
            "retrieval_depth": self.retrieval.depth,
            "fusion_model": self.retrieval.fusion_model,
        }


@dataclass(frozen=True)
class ExternalSystem:
    """A system that answers by itself (answers file, Python callable, HTTP endpoint).

    It has no chunking, embedder or retrieval key and calls no model through the gateway; its
    rows carry ``model = generator_model = "external:<kind>"``."""

    spec: ExternalSpec
    is_external: ClassVar[bool] = True

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def kind(self) -> str:
        return self.spec.kind

    @property
    def chunking(self) -> None:
        return None

    @property
    def embedder(self) -> None:
        return None

    @property
    def generator_model(self) -> str:
        """The ``model`` column of its answer rows: ``external:<kind>``."""
        return external_model(self.kind)

    def describe(self) -> dict[str, Any]:
        """The configuration as written (header templates and variable names, no secrets)."""
        return self.spec.model_dump(mode="json")

    @property
    def target(self) -> str:
        """What answers: the answers file, ``module:attr``, or the URL (never a header)."""
        spec = self.spec
        if isinstance(spec, AnswersFileSpec):
            return spec.path
        if isinstance(spec, PythonSpec):
            return spec.callable
        if spec.openai_chat is not None:
            return f"{spec.openai_chat.base_url} (openai_chat, {spec.openai_chat.model})"
        return f"{spec.method} {spec.url}"

    def inputs(self) -> list[Path]:
        """Files / folders its answers depend on (see ``external.inputs.input_paths``)."""
        return input_paths(self.spec)

    def llm_models(self) -> tuple[str, ...]:
        return ()

    @property
    def control(self) -> None:
        return None

    def plan_entry(self) -> PlanEntry:
        return PlanEntry(self.name, None, None, tuple(p.as_posix() for p in self.inputs()))


@dataclass(frozen=True)
class ShuffledSystem:
    """The ``shuffled`` control: rows of ``base`` re-assigned to other questions. It calls no
    model; its answer task reads the base system's partition."""

    spec: ShuffledSpec
    is_external: ClassVar[bool] = False

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def kind(self) -> str:
        return "shuffled"

    @property
    def control(self) -> str:
        return "shuffled"

    @property
    def base(self) -> str:
        return self.spec.base

    @property
    def chunking(self) -> None:
        return None

    @property
    def embedder(self) -> None:
        return None

    @property
    def generator_model(self) -> str:
        return f"answers of {self.base}"

    def describe(self) -> dict[str, Any]:
        return self.spec.model_dump(mode="json")

    def llm_models(self) -> tuple[str, ...]:
        return ()

    def plan_entry(self) -> PlanEntry:
        from ragcourt.core import catalog

        base_partition = catalog.path("answer_partition", system=self.base).as_posix()
        return PlanEntry(self.name, None, None, (base_partition,))


AnySystem = System | ExternalSystem | ShuffledSystem
"""A configured candidate system of any kind."""

LIST_COLUMNS = ("name", "kind", "chunking", "embedder", "retriever", "top_k", "RAG-Fusion",
                "generator / target")  # fmt: skip


def list_row(system: AnySystem) -> dict[str, str]:
    """One row of ``ragcourt systems list`` (keys :data:`LIST_COLUMNS`; no secrets)."""
    if isinstance(system, ExternalSystem):
        return dict(zip(LIST_COLUMNS, (system.name, system.kind, *["–"] * 5, system.target),
                        strict=True))  # fmt: skip
    if isinstance(system, ShuffledSystem):
        return dict(zip(LIST_COLUMNS, (system.name, "control: shuffled", *["–"] * 5,
                                       system.generator_model), strict=True))  # fmt: skip
    spec = system.spec
    fusion = f"{spec.fusion.n_variants} variants" if spec.fusion else "off"
    kind = BUILTIN if system.control is None else f"control: {system.control}"
    values = (spec.name, kind, spec.chunking, spec.embedder or "–", spec.retriever,
              str(spec.top_k), fusion, system.generator_model)  # fmt: skip
    return dict(zip(LIST_COLUMNS, values, strict=True))


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


def load_yaml_text(text: str, path: Path) -> Any:
    """YAML text of the systems file ``path``, duplicate keys rejected (one-line ConfigError)."""
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader)
    except ConfigError as err:
        raise ConfigError(f"{path}: {err}") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" line {mark.line + 1}:" if mark is not None else ""
        raise ConfigError(f"{path}:{where} invalid YAML: {getattr(err, 'problem', err)}") from None


def _read_yaml(path: Path) -> Any:
    if not path.is_file():
        raise ConfigError(f"{path}: systems file not found (params key 'systems_file')")
    return load_yaml_text(path.read_text(encoding="utf-8"), path)


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
    if spec.retriever == "bm25" or spec.retriever in CONTROL_RETRIEVERS:
        spec = spec.model_copy(update={"embedder": None})  # BM25 / controls use no embedder
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


def _kind(raw: Mapping[str, Any], label: str) -> str:
    kind = raw.get("kind", BUILTIN)
    if kind not in KINDS:
        raise ConfigError(f"{label}: key 'kind': unknown kind {kind!r} (kinds: {', '.join(KINDS)})")
    return str(kind)


def _config_key(s: AnySystem) -> str:
    """The effective configuration as comparable text (equal texts = identical systems)."""
    if isinstance(s, ExternalSystem | ShuffledSystem):
        cfg = {k: v for k, v in s.describe().items() if k != "name"}
    else:
        cfg = effective_config(s)
    return repr(sorted((k, repr(v)) for k, v in cfg.items()))


def parse_systems(
    data: Any,
    params: Params,
    source: Path | str,
    *,
    check_models: bool = True,
    prompts_dir: Path | None = None,
) -> list[AnySystem]:
    """Validate a loaded systems mapping; every problem is a ConfigError naming system and file."""
    source = Path(source)
    if not isinstance(data, Mapping):
        raise ConfigError(f"{source}: top level must be a mapping with 'systems' and/or 'grids'")
    try:
        doc = SystemsFile.model_validate(data)
    except ValidationError as err:
        raise ConfigError(f"{source}: {_first_error(err)}") from None
    if "kind" in doc.defaults:
        raise ConfigError(
            f"{source}: key 'defaults.kind': defaults apply to built-in systems only; "
            "write 'kind' on each external system"
        )

    raws: list[tuple[str, dict[str, Any]]] = []
    for i, raw in enumerate(doc.systems):
        name = raw.get("name")
        label = f"system {name!r}" if isinstance(name, str) else f"systems[{i}]"
        external = "answers" in raw or _kind(raw, f"{source}: {label}") != BUILTIN
        raws.append((label, dict(raw) if external else {**doc.defaults, **raw}))
    for i, grid in enumerate(doc.grids):
        where = f"{source}: grids[{i}]" + (f" ('{grid.prefix}')" if grid.prefix else "")
        if _kind(grid.base, where) != BUILTIN:
            raise ConfigError(f"{where}: key 'base.kind': grids expand built-in systems only")
        for raw in expand_grid(grid, doc.defaults, where):
            raws.append((f"grids[{i}] system '{raw['name']}'", raw))
    if not raws:
        raise ConfigError(f"{source}: no systems declared (add 'systems' or 'grids')")

    systems: list[AnySystem] = []
    for label, raw in raws:
        if "answers" in raw:  # a shuffled-answers control: defaults do not apply
            systems.append(_shuffled(raw, label, source, systems))
            continue
        kind = _kind(raw, f"{source}: {label}")
        fields = {k: v for k, v in raw.items() if k != "kind"}
        try:
            if kind == BUILTIN:
                spec = SystemSpec.model_validate(fields)
                systems.append(_resolve(spec, params, f"{source}: {label}"))
            else:
                systems.append(ExternalSystem(_EXTERNAL_SPECS[kind].model_validate(raw)))
        except ValidationError as err:
            raise ConfigError(f"{source}: {label}: {_first_error(err)}") from None
    systems.extend(param_controls(systems, params, source))

    by_name: dict[str, AnySystem] = {}
    by_config: dict[str, str] = {}
    for s in systems:
        if s.name in by_name:
            raise ConfigError(f"{source}: duplicate system name '{s.name}'")
        by_name[s.name] = s
        cfg = _config_key(s)
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
        _check_local_models(builtin, params, source)
    _check_prompts(builtin, source, prompts_dir)
    return systems


def _shuffled(
    raw: Mapping[str, Any], label: str, source: Path, earlier: Sequence[AnySystem]
) -> ShuffledSystem:
    """A ``{name, answers: shuffled, base}`` entry; the base must be an earlier system that is
    not itself shuffled (its partition is this system's input)."""
    try:
        spec = ShuffledSpec.model_validate(dict(raw))
    except ValidationError as err:
        raise ConfigError(f"{source}: {label}: {_first_error(err)}") from None
    bases = {s.name: s for s in earlier}
    if spec.base not in bases:
        raise ConfigError(
            f"{source}: {label}: key 'base': '{spec.base}' is not a system declared before it "
            f"(earlier systems: {sorted(bases)})"
        )
    if isinstance(bases[spec.base], ShuffledSystem):
        raise ConfigError(f"{source}: {label}: key 'base': '{spec.base}' is itself shuffled")
    return ShuffledSystem(spec)


def param_controls(
    systems: Sequence[AnySystem], params: Params, source: Path | str = "params"
) -> list[AnySystem]:
    """The ``control-<kind>`` systems of ``params.controls.kinds``, built on ``controls.base``
    (null: the first built-in system): same chunking, top-k, generator, prompt and max_tokens;
    ``shuffled`` takes the base system's answers."""
    cp = params.controls
    if not cp.kinds:
        return []
    builtin = [s for s in builtin_systems(systems) if s.control is None]
    if cp.base is None:
        if not builtin:
            raise ConfigError(
                f"{source}: key 'controls.base': no built-in system to build controls on"
            )
        base = builtin[0]
    else:
        named = {s.name: s for s in builtin}
        if cp.base not in named:
            raise ConfigError(
                f"params: key 'controls.base': '{cp.base}' is not a built-in real system "
                f"of {source} (have {sorted(named)})"
            )
        base = named[cp.base]
    out: list[AnySystem] = []
    for kind in cp.kinds:
        name = f"{CONTROL_PREFIX}{kind}"
        if any(s.name == name for s in systems):
            raise ConfigError(
                f"params: key 'controls.kinds': system name '{name}' is already used in {source}"
            )
        if kind == "shuffled":
            out.append(ShuffledSystem(ShuffledSpec(name=name, answers="shuffled", base=base.name)))
            continue
        spec = base.spec.model_copy(
            update={"name": name, "retriever": kind, "embedder": None, "fusion": None}
        )
        out.append(_resolve(spec, params, f"params: key 'controls.kinds' ({kind})"))
    return out


def load_systems(params: Params, path: Path | str | None = None, **kw: Any) -> list[AnySystem]:
    """Read, expand and validate the systems file (default: ``params.systems_file``)."""
    source = Path(path or params.systems_file)
    return parse_systems(_read_yaml(source), params, source, **kw)


def builtin_systems(systems: Sequence[AnySystem]) -> list[System]:
    """The built-in systems among ``systems``, in order."""
    return [s for s in systems if isinstance(s, System)]


def external_systems(systems: Sequence[AnySystem]) -> list[ExternalSystem]:
    """The external systems among ``systems``, in order."""
    return [s for s in systems if isinstance(s, ExternalSystem)]


def shuffled_systems(systems: Sequence[AnySystem]) -> list[ShuffledSystem]:
    """The shuffled-answers controls among ``systems``, in order."""
    return [s for s in systems if isinstance(s, ShuffledSystem)]


def group_by_retrieval(systems: Sequence[AnySystem]) -> dict[RetrievalKey, list[System]]:
    """Built-in systems sharing a retrieval key, in config order (retrieval runs once per
    group); external systems retrieve by themselves and are in no group."""
    groups: dict[RetrievalKey, list[System]] = {}
    for s in builtin_systems(systems):
        groups.setdefault(s.retrieval, []).append(s)
    return groups
