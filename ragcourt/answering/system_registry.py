"""System kinds (spec §3): what every configured candidate system offers the pipeline, and the
registry of the kinds a systems-file entry may name.

An entry's kind is its ``kind`` key (default ``builtin``; an ``{answers: shuffled, ...}`` entry
is kind ``shuffled``). :data:`SYSTEM_KINDS` maps it to a :class:`SystemKind`, whose ``parse``
turns the entry into a :class:`CandidateSystem`. The built-in kinds are one module each in
:mod:`ragcourt.answering.system_kinds` (``builtin``, ``shuffled``, and the external kinds
``answers_file`` / ``python`` / ``http``); the registry imports that package on first lookup,
so a new kind is one new module there (or an entry-point plug-in,
:mod:`ragcourt.core.registry`). Nothing downstream asks a system for its class: the stage
graph, the answer stage and ``ragcourt systems list`` use only this protocol.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import polars as pl

from ragcourt.core.params import Params
from ragcourt.core.registry import Registry

BUILTIN = "builtin"  # the kind of an entry without ``kind``
SHUFFLED = "shuffled"  # the kind of an ``answers: shuffled`` entry
CONTROL_PREFIX = "control-"  # name prefix of the systems ``controls.kinds`` adds

LIST_COLUMNS = ("name", "kind", "chunking", "embedder", "retriever", "top_k", "RAG-Fusion",
                "generator / target")  # fmt: skip
"""Columns of ``ragcourt systems list`` (:meth:`CandidateSystem.list_row`)."""


@dataclass(frozen=True)
class PlanEntry:
    """What the stage graph needs of one system: its answer task reads the chunks (and, with
    an embedder, the index) of ``chunking`` (None for a system without retrieval) plus
    ``inputs`` (paths relative to the project root: an answers file, module, partition ...)."""

    name: str
    chunking: str | None
    embedder: str | None
    inputs: tuple[str, ...] = ()


@dataclass(frozen=True)
class AnswerJob:
    """What a system that answers by itself gets: the questions, the params and, when only
    its failed questions are asked again, its ``previous`` partition."""

    qa: pl.DataFrame
    params: Params
    previous: pl.DataFrame | None = None


class CandidateSystem(Protocol):
    """A configured candidate system of any kind."""

    @property
    def name(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def control(self) -> str | None:
        """Its control kind (``oracle``, ``random``, ``none``, ``shuffled``); None: real."""

    @property
    def is_external(self) -> bool:
        """It answers outside ragcourt (rows carry ``model = external:<kind>``)."""

    @property
    def answer_order(self) -> int:
        """0: answered by the answer stage through shared retrieval (built-in); otherwise by
        :meth:`answer`, in increasing order (a shuffled control after its base)."""

    @property
    def chunking(self) -> str | None: ...
    @property
    def embedder(self) -> str | None: ...
    @property
    def generator_model(self) -> str:
        """The ``model`` column of its answer rows."""

    def describe(self) -> dict[str, Any]:
        """Its configuration as plain data (no secrets)."""
        ...

    def config_key(self) -> str:
        """Its effective configuration as text: equal texts are identical systems."""
        ...

    def config_hash(self, params: Params, prompts_dir: Path | None = None) -> str:
        """Hash of everything that fixes its answers apart from the questions."""
        ...

    def llm_models(self) -> tuple[str, ...]:
        """Models it calls through the gateway."""
        ...

    def plan_entry(self) -> PlanEntry: ...

    def list_row(self) -> dict[str, str]:
        """Its row of ``ragcourt systems list`` (keys :data:`LIST_COLUMNS`; no secrets)."""
        ...

    def answer(self, job: AnswerJob) -> pl.DataFrame:
        """Rows of table ``answers``, one per question (systems with ``answer_order > 0``)."""
        ...


AnySystem = CandidateSystem
"""A configured candidate system of any kind."""


@dataclass(frozen=True)
class ParseContext:
    """Where an entry is parsed: ``label`` names it in errors (``<file>: system 'x'``);
    ``earlier`` are the systems declared before it."""

    params: Params
    source: Path
    label: str
    earlier: Sequence[CandidateSystem] = ()


@dataclass(frozen=True)
class SystemKind:
    """A kind of systems-file entry: ``parse(entry, ctx)`` validates the entry as written
    (pydantic ``ValidationError`` or one-line ``ConfigError``); ``takes_defaults``: the file's
    ``defaults`` are merged under its entries and grids may expand it."""

    parse: Callable[[Mapping[str, Any], ParseContext], CandidateSystem]
    takes_defaults: bool = False


SYSTEM_KINDS: Registry[SystemKind] = Registry(
    "system kind", builtins=("ragcourt.answering.system_kinds",)
)


def kind_of(raw: Mapping[str, Any]) -> object:
    """The kind an entry names (not yet checked against :data:`SYSTEM_KINDS`)."""
    return raw.get("kind", SHUFFLED if "answers" in raw else BUILTIN)
