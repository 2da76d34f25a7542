"""Kinds ``answers_file``, ``python`` and ``http``: the user's own RAG application answers
by itself (syntax: :mod:`ragcourt.answering.external.specs`), through the answer route of its
spec (:data:`~ragcourt.answering.external.routes.ANSWER_ROUTES`). It has no chunking, embedder
or retrieval key and calls no model through the gateway; its rows carry
``model = generator_model = "external:<kind>"``. ``defaults`` of the systems file do not apply.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

import polars as pl

from ragcourt.answering.candidate_system import AnswerJob, CandidateSystem
from ragcourt.answering.external.inputs import external_config_hash, input_paths
from ragcourt.answering.external.routes import ANSWER_ROUTES
from ragcourt.answering.external.specs import AnswersFileSpec, ExternalSpec, HttpSpec, PythonSpec
from ragcourt.answering.params import AnsweringView
from ragcourt.answering.system_registry import SYSTEM_KINDS, ParseContext, SystemKind
from ragcourt.core.provenance import external_model


@dataclass(frozen=True)
class ExternalSystem(CandidateSystem):
    """A system that answers by itself (answers file, Python callable, HTTP endpoint)."""

    spec: ExternalSpec
    is_external = True  # a constant of the kind: a class attribute, not a dataclass field

    @property
    def kind(self) -> str:
        return self.spec.kind

    @property
    def generator_model(self) -> str:
        """The ``model`` column of its answer rows: ``external:<kind>``."""
        return external_model(self.kind)

    def config_hash(self, params: AnsweringView, prompts_dir: Path | None = None) -> str:
        return external_config_hash(self.spec)

    @property
    def target(self) -> str:
        """What answers: the answers file, ``module:attr``, or the URL (never a header)."""
        return ANSWER_ROUTES.get(self.spec.route, f"system '{self.name}'").target(self.spec)

    def inputs(self) -> list[Path]:
        """Files / folders its answers depend on (see ``external.inputs.input_paths``)."""
        return input_paths(self.spec)

    def answer(self, job: AnswerJob) -> pl.DataFrame:
        """Its rows through its answer route; with ``job.previous`` a Python or HTTP system
        is asked only the questions that failed (an answers file is read again); with
        ``job.pool`` a route that reads the whole set gets it and ``job.qa``'s rows are kept."""
        route = ANSWER_ROUTES.get(self.spec.route, f"system '{self.name}'")
        whole = job.pool is not None and route.reads_whole_set
        qa = job.pool if whole and job.pool is not None else job.qa
        rows = route.answer(
            self.name, self.generator_model, self.spec, qa, job.previous, job.params.limits
        )
        if not whole:
            return rows
        order = job.qa.select("question_id").with_row_index("_at")
        return rows.join(order, on="question_id").sort("_at").drop("_at")


def is_external_system(system: CandidateSystem) -> TypeGuard[ExternalSystem]:
    """An external system (kinds ``answers_file``, ``python``, ``http``)."""
    return isinstance(system, ExternalSystem)


def external_systems(systems: Sequence[CandidateSystem]) -> list[ExternalSystem]:
    """The external systems among ``systems``, in order."""
    return [s for s in systems if is_external_system(s)]


def _kind(spec_model: type[ExternalSpec]) -> SystemKind:
    def parse(raw: Mapping[str, Any], ctx: ParseContext) -> ExternalSystem:
        return ExternalSystem(spec_model.model_validate(dict(raw)))

    return SystemKind(parse)


SYSTEM_KINDS.register("answers_file")(_kind(AnswersFileSpec))
SYSTEM_KINDS.register("python")(_kind(PythonSpec))
SYSTEM_KINDS.register("http")(_kind(HttpSpec))
