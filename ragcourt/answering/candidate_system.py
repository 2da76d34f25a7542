"""What every configured candidate system offers the pipeline (spec §3):
:class:`CandidateSystem`, a protocol that every system kind subclasses for its defaults.

The defaults are those of a system that answers by itself (:meth:`CandidateSystem.answer`,
after the built-in systems), without retrieval or gateway models, described by its spec as
written; a kind (:mod:`ragcourt.answering.system_kinds`) overrides only what differs and
implements ``kind``, ``generator_model``, ``config_hash`` and ``answer``. Nothing downstream
asks a system for its class: the stage graph, the answer stage and ``ragcourt systems list``
use only these members (so a stand-in with the same members will do).
"""

from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import polars as pl

from ragcourt.answering.names import NamedSpec
from ragcourt.answering.params import AnsweringView

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
    params: AnsweringView
    previous: pl.DataFrame | None = None
    #: the whole QA set when ``qa`` is a part of it (a race round): an answers file is checked
    #: against the whole set
    pool: pl.DataFrame | None = None


class CandidateSystem(Protocol):
    """A configured candidate system of any kind. A kind subclasses it as a frozen dataclass
    holding its ``spec`` (a member that is a constant of the kind may be a class attribute)."""

    spec: NamedSpec

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    @abstractmethod
    def kind(self) -> str: ...

    @property
    def control(self) -> str | None:
        """Its control kind (``oracle``, ``random``, ``none``, ``shuffled``); None: real."""
        return None

    @property
    def is_external(self) -> bool:
        """It answers outside ragcourt (rows carry ``model = external:<kind>``)."""
        return False

    @property
    def answer_order(self) -> int:
        """0: answered by the answer stage through shared retrieval (built-in); otherwise by
        :meth:`answer`, in increasing order (a shuffled control after its base)."""
        return 1

    @property
    def chunking(self) -> str | None:
        return None

    @property
    def embedder(self) -> str | None:
        return None

    @property
    @abstractmethod
    def generator_model(self) -> str:
        """The ``model`` column of its answer rows."""

    @property
    def target(self) -> str:
        """What answers, in ``ragcourt systems list``: its generator model."""
        return self.generator_model

    def describe(self) -> dict[str, Any]:
        """Its configuration as plain data (no secrets): its spec as written."""
        return self.spec.model_dump(mode="json")

    def effective_config(self) -> dict[str, Any]:
        """:meth:`describe` without the name: what decides whether two systems are one."""
        return {k: v for k, v in self.describe().items() if k != "name"}

    def config_key(self) -> str:
        """Its effective configuration as text: equal texts are identical systems."""
        return repr(sorted((k, repr(v)) for k, v in self.effective_config().items()))

    @abstractmethod
    def config_hash(self, params: AnsweringView, prompts_dir: Path | None = None) -> str:
        """Hash of everything that fixes its answers apart from the questions."""

    def llm_models(self) -> tuple[str, ...]:
        """Models it calls through the gateway."""
        return ()

    def inputs(self) -> list[Path]:
        """Files its answers depend on besides chunks and index (stage-graph dependencies)."""
        return []

    def plan_entry(self) -> PlanEntry:
        inputs = tuple(p.as_posix() for p in self.inputs())
        return PlanEntry(self.name, self.chunking, self.embedder, inputs)

    def retrieval_columns(self) -> tuple[str, ...]:
        """Its chunking, embedder, retriever, top_k and RAG-Fusion cells of ``systems list``."""
        return ("–",) * 5

    def list_row(self) -> dict[str, str]:
        """Its row of ``ragcourt systems list`` (keys :data:`LIST_COLUMNS`; no secrets)."""
        kind = self.kind if self.control is None else f"control: {self.control}"
        values = (self.name, kind, *self.retrieval_columns(), self.target)
        return dict(zip(LIST_COLUMNS, values, strict=True))

    @abstractmethod
    def answer(self, job: AnswerJob) -> pl.DataFrame:
        """Rows of table ``answers``, one per question (systems with ``answer_order > 0``)."""
