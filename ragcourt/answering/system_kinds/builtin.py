"""Kind ``builtin`` (spec §3): chunking × embedder × retriever × optional RAG-Fusion × top-k ×
generator model × prompt version, answered by the answer stage through shared retrieval.

Normalisation: BM25 and control retrievers ignore the embedder (set to null), so two systems
that differ only there are identical. ``generator: null`` and ``fusion.model: null`` mean
``llm.model``, so systems that differ only in the generator share their retrieval, RAG-Fusion
included. A control retriever (``oracle`` / ``random`` / ``none``) makes the system a control.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

import polars as pl

from ragcourt.answering.retriever_kinds import is_control, needs_embedder
from ragcourt.answering.system_registry import (
    BUILTIN,
    SYSTEM_KINDS,
    AnswerJob,
    CandidateSystem,
    ParseContext,
    PlanEntry,
    SystemKind,
)
from ragcourt.answering.system_specs import SystemSpec
from ragcourt.core.errors import ConfigError
from ragcourt.core.params import Params


@dataclass(frozen=True)
class RetrievalKey:
    """What fixes a system's retrieved passages: systems with equal keys share one retrieval."""

    chunking: str
    embedder: str | None
    retriever: str
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
    """A validated built-in system with every default resolved (models are concrete strings)."""

    spec: SystemSpec
    generator_model: str
    retrieval: RetrievalKey

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def kind(self) -> str:
        return BUILTIN

    @property
    def is_external(self) -> bool:
        return False

    @property
    def answer_order(self) -> int:
        return 0

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
        return r if is_control(r) else None

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

    def effective_config(self) -> dict[str, Any]:
        """``describe()`` without the name, with the raw ``generator`` / ``fusion.model``
        strings replaced by the models they resolve to (``null`` and the default model are
        the same)."""
        cfg = {k: v for k, v in self.describe().items() if k != "name"}
        cfg["generator"] = self.generator_model
        if cfg.get("fusion") is not None:
            cfg["fusion"] = {**cfg["fusion"], "model": self.retrieval.fusion_model}
        return cfg

    def config_key(self) -> str:
        return repr(sorted((k, repr(v)) for k, v in self.effective_config().items()))

    def config_hash(self, params: Params, prompts_dir: Path | None = None) -> str:
        from ragcourt.answering.partitions import builtin_config_hash

        return builtin_config_hash(self, params, prompts_dir)

    def list_row(self) -> dict[str, str]:
        from ragcourt.answering.system_registry import LIST_COLUMNS

        spec = self.spec
        fusion = f"{spec.fusion.n_variants} variants" if spec.fusion else "off"
        kind = BUILTIN if self.control is None else f"control: {self.control}"
        values = (spec.name, kind, spec.chunking, spec.embedder or "–", spec.retriever,
                  str(spec.top_k), fusion, self.generator_model)  # fmt: skip
        return dict(zip(LIST_COLUMNS, values, strict=True))

    def answer(self, job: AnswerJob) -> pl.DataFrame:
        raise NotImplementedError("built-in systems are answered in retrieval groups")


def is_builtin(system: CandidateSystem) -> TypeGuard[System]:
    """A built-in system (kind ``builtin``, controls with a control retriever included)."""
    return system.kind == BUILTIN and isinstance(system, System)


def builtin_systems(systems: Sequence[CandidateSystem]) -> list[System]:
    """The built-in systems among ``systems``, in order."""
    return [s for s in systems if is_builtin(s)]


def resolve(spec: SystemSpec, params: Params, where: str) -> System:
    """``spec`` checked against params, every default resolved (one-line ConfigError)."""
    if spec.chunking not in params.chunkings:
        raise ConfigError(
            f"{where}: unknown chunking '{spec.chunking}' "
            f"(params chunkings: {sorted(params.chunkings)})"
        )
    if not needs_embedder(spec.retriever):
        spec = spec.model_copy(update={"embedder": None})  # BM25 / controls use no embedder
    elif spec.embedder not in params.embedders:
        raise ConfigError(
            f"{where}: unknown embedder '{spec.embedder}' "
            f"(params embedders: {sorted(params.embedders)})"
        )
    fusion = spec.fusion
    key = RetrievalKey(
        chunking=spec.chunking,
        embedder=spec.embedder,
        retriever=spec.retriever,
        depth=max(params.retrieval.depth, spec.top_k),
        fusion_variants=fusion.n_variants if fusion else 0,
        fusion_model=params.llm.resolve(fusion.model) if fusion else None,
        fusion_prompt_version=fusion.prompt_version if fusion else None,
        fusion_max_tokens=fusion.max_tokens if fusion else None,
    )
    return System(spec=spec, generator_model=params.llm.resolve(spec.generator), retrieval=key)


def _parse(raw: Mapping[str, Any], ctx: ParseContext) -> System:
    spec = SystemSpec.model_validate({k: v for k, v in raw.items() if k != "kind"})
    return resolve(spec, ctx.params, f"{ctx.source}: {ctx.label}")


SYSTEM_KINDS.register(BUILTIN)(SystemKind(_parse, takes_defaults=True))


def check_local_models(systems: Sequence[System], params: Params, source: Path) -> None:
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


def check_prompts(systems: Sequence[System], source: Path, prompts_dir: Path | None) -> None:
    """Every answer prompt version the systems name exists (one-line ConfigError)."""
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
