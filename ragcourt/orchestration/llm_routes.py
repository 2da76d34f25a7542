"""Stage ``llm_routes``: where every hosted model of the run is served, as a file DVC sees.

A hosted model's API base can come from the environment (``OPENAI_API_BASE``), which DVC and
the params file never see. The stage writes, per model-calling stage, each hosted model's route
(API base without secrets, where it came from, the key *variable*, the server-specific sampling
fields) and the sampling params sent on every call. The model-calling stages depend on the
file: point a model string at another server and they re-run; leave it and the file is byte-
identical, so nothing re-runs. Key values are never written. DVC re-runs the stage when its
params or the systems file change; the environment is checked outside DVC, cheaply: ``ragcourt
run`` calls :func:`refresh` before ``dvc repro``, which rewrites the file only when the record
changed (DVC then sees a modified output and re-runs the stage and what depends on it). After
changing an API base in the environment, a bare ``dvc repro`` needs ``ragcourt run`` (or ``dvc
repro -f llm_routes``) first. The Prefect flow hashes the same record into its cache key.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from ragcourt.answering.params import AnsweringView
from ragcourt.core import catalog
from ragcourt.core.io import write_json
from ragcourt.llm import providers
from ragcourt.llm.endpoints import route

if TYPE_CHECKING:
    from ragcourt.answering.systems import CandidateSystem


class _ModelRef(Protocol):
    model: str | None


class _QAGenModels(Protocol):
    question_model: str | None
    answer_model: str | None
    filter_model: str | None


class _JudgeModels(Protocol):
    correctness_model: str | None
    relevance_model: str | None

    @property
    def judges(self) -> Mapping[str, _ModelRef]: ...

    @property
    def udcg(self) -> _ModelRef: ...


class RoutesView(AnsweringView, Protocol):
    """What the routes read: the answer stage's params (to load the systems) and the model
    strings of every other role (only those, so the stage's code deps stay the systems' and
    the gateway's)."""

    @property
    def qagen(self) -> _QAGenModels: ...

    @property
    def judge(self) -> _JudgeModels: ...

    @property
    def tournament(self) -> _ModelRef: ...


def stage_models(params: RoutesView, systems: Sequence[CandidateSystem]) -> dict[str, list[str]]:
    """The model strings each model-calling stage may call (roles resolved to ``llm.model``)."""
    llm, q, j = params.llm, params.qagen, params.judge
    roles: dict[str, list[str | None]] = {
        "qagen": [q.question_model, q.answer_model, q.filter_model],
        "answer": [m for s in systems for m in s.llm_models()],
        "judge": [j.correctness_model, *(spec.model for spec in j.judges.values())],
        "judge_retrieval": [j.relevance_model, j.udcg.model],
        "tournament": [params.tournament.model],
    }
    return {stage: sorted({llm.resolve(m) for m in models}) for stage, models in roles.items()}


def routes_record(params: RoutesView, systems: Sequence[CandidateSystem]) -> dict[str, Any]:
    """``{"sampling": {...}, "stages": {stage: {model: route record}}}`` of hosted models."""
    llm = params.llm
    stages: dict[str, dict[str, Any]] = {}
    for stage, models in stage_models(params, systems).items():
        hosted = [m for m in models if not providers.is_in_process(m)]
        stages[stage] = {m: route(m, llm).record() for m in hosted}
    return {
        "sampling": {"temperature": llm.temperature, "top_p": llm.top_p, "seed": llm.seed},
        "stages": stages,
    }


def current_record(params: RoutesView) -> dict[str, Any]:
    """:func:`routes_record` with the configured systems (what the stage writes now)."""
    from ragcourt.answering.systems import load_systems

    return routes_record(params, load_systems(params))


def run(params: RoutesView) -> None:
    """Write the routes record (catalog ``llm_routes``)."""
    write_json(current_record(params), catalog.path("llm_routes"))


def refresh(params: RoutesView) -> bool:
    """Rewrite the routes file when it exists and the current record differs (an API base or
    key variable changed in the environment); True when it was rewritten. A missing file is
    left for the stage to write."""
    path = catalog.path("llm_routes")
    if not path.is_file():
        return False
    record = current_record(params)
    try:
        if json.loads(path.read_text(encoding="utf-8")) == record:
            return False
    except (OSError, ValueError):
        pass  # unreadable: rewrite it
    write_json(record, path)
    return True
