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

from ragcourt.answering.candidate_system import AnswerJob, CandidateSystem
from ragcourt.answering.params import AnsweringView
from ragcourt.answering.partitions import chunks_path, dense_inputs, file_digest, model_identity
from ragcourt.answering.retrieval_key import RetrievalKey
from ragcourt.answering.retriever_kinds import is_control, needs_embedder, reads_bm25
from ragcourt.answering.system_registry import BUILTIN, SYSTEM_KINDS, ParseContext, SystemKind
from ragcourt.answering.system_specs import SystemSpec
from ragcourt.core import catalog
from ragcourt.core.errors import ConfigError
from ragcourt.core.fingerprint import object_sha256
from ragcourt.core.prompts import prompt

ANSWER_PROMPTS = ("answer_system", "answer_user", "passage", "no_passages")
FUSION_PROMPTS = ("variants_system", "variants_user")


@dataclass(frozen=True)
class System(CandidateSystem):
    """A validated built-in system with every default resolved (models are concrete strings)."""

    spec: SystemSpec
    resolved_generator: str  # ``spec.generator``, null resolved to ``llm.model``
    retrieval: RetrievalKey
    # constants of the kind: class attributes, not dataclass fields
    kind = BUILTIN
    answer_order = 0

    @property
    def generator_model(self) -> str:
        return self.resolved_generator

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
        cfg = super().effective_config()
        cfg["generator"] = self.generator_model
        if cfg.get("fusion") is not None:
            cfg["fusion"] = {**cfg["fusion"], "model": self.retrieval.fusion_model}
        return cfg

    def config_hash(self, params: AnsweringView, prompts_dir: Path | None = None) -> str:
        """Its effective configuration, ``model_identity`` of the generator and the RAG-Fusion
        query model, prompts, sampling, retrieval, chunking and embedder params and the
        digests of the files it reads (see :mod:`ragcourt.answering.partitions`)."""
        spec, key = self.spec, self.retrieval
        texts = {n: prompt("answer", n, spec.prompt_version, prompts_dir) for n in ANSWER_PROMPTS}
        if spec.fusion:
            texts |= {
                f"fusion.{n}": prompt("answer", n, spec.fusion.prompt_version, prompts_dir)
                for n in FUSION_PROMPTS
            }
        bm25 = params.retrieval.bm25.model_dump() if reads_bm25(key.retriever) else None
        # the retriever kind's own settings, when it has any (absent: the hash is unchanged)
        given = params.retrieval.settings.get(key.retriever)
        own = {"settings": given} if given else {}
        return object_sha256(
            {
                **({"control_seed": params.controls.seed} if self.control == "random" else {}),
                "system": {"name": self.name, **self.effective_config()},
                "models": {
                    "generator": model_identity(self.generator_model, params),
                    "fusion": model_identity(key.fusion_model, params),
                },
                "prompts": texts,
                "sampling": {"temperature": params.llm.temperature, "seed": params.llm.seed},
                "retrieval": {"rrf_k": params.retrieval.rrf_k, "bm25": bm25, **own},
                "chunking": params.chunkings[key.chunking].model_dump(),
                "chunk_tokenizer": params.chunk_tokenizer,
                "embedder": params.embedders[key.embedder].identity() if key.embedder else None,
                "inputs": self._input_digests(),
            }
        )

    def _input_digests(self) -> dict[str, str]:
        """sha256 of the chunks (and the dense index files; the QA table for ``oracle``)."""
        key = self.retrieval
        inputs = {"chunks": file_digest(chunks_path(key.chunking))}
        if key.embedder is not None:
            inputs |= {p.name: file_digest(p) for p in dense_inputs(key.chunking, key.embedder)}
        if self.control == "oracle":
            inputs |= {"qa": file_digest(catalog.path("qa"))}
        return inputs

    def retrieval_columns(self) -> tuple[str, ...]:
        spec = self.spec
        fusion = f"{spec.fusion.n_variants} variants" if spec.fusion else "off"
        return (spec.chunking, spec.embedder or "–", spec.retriever, str(spec.top_k), fusion)

    def answer(self, job: AnswerJob) -> pl.DataFrame:
        raise NotImplementedError("built-in systems are answered in retrieval groups")


def is_builtin(system: CandidateSystem) -> TypeGuard[System]:
    """A built-in system (kind ``builtin``, controls with a control retriever included)."""
    return system.kind == BUILTIN and isinstance(system, System)


def builtin_systems(systems: Sequence[CandidateSystem]) -> list[System]:
    """The built-in systems among ``systems``, in order."""
    return [s for s in systems if is_builtin(s)]


def resolve(spec: SystemSpec, params: AnsweringView, where: str) -> System:
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
    return System(spec=spec, resolved_generator=params.llm.resolve(spec.generator), retrieval=key)


def _parse(raw: Mapping[str, Any], ctx: ParseContext) -> System:
    spec = SystemSpec.model_validate({k: v for k, v in raw.items() if k != "kind"})
    return resolve(spec, ctx.params, f"{ctx.source}: {ctx.label}")


SYSTEM_KINDS.register(BUILTIN)(SystemKind(_parse, takes_defaults=True))


def check_local_models(systems: Sequence[System], params: AnsweringView, source: Path) -> None:
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
    for s in systems:
        versions = {(n, s.spec.prompt_version) for n in ANSWER_PROMPTS}
        if s.spec.fusion:  # the RAG-Fusion query writer reads both (generation, rag_fusion)
            versions |= {(n, s.spec.fusion.prompt_version) for n in FUSION_PROMPTS}
        for name, version in sorted(versions):
            try:
                prompt("answer", name, version, prompts_dir)
            except ConfigError as err:
                raise ConfigError(f"{source}: system '{s.name}': {err}") from None
