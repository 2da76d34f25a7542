"""The ``llm_routes`` stage: ``python -m stages llm_routes`` under DVC, a task in the
Prefect flow."""

from __future__ import annotations

from ragcourt.orchestration.stage_def import Dep, StageDef

STAGE = StageDef(
    "llm_routes",
    "ragcourt.orchestration.llm_routes:run",
    "Where each hosted model is served (API base from params or the environment) and\n"
    "the sampling params sent: runs every time, rewrites an identical file unless a\n"
    "route changed, so the model-calling stages re-run exactly when one did.",
    deps=(Dep(param="systems_file"),),
    params=(
        "llm",
        "qagen.question_model",
        "qagen.answer_model",
        "qagen.filter_model",
        "judge.correctness_model",
        "judge.judges",
        "judge.relevance_model",
        "judge.udcg.model",
        "tournament.model",
        "systems_file",
        "chunkings",
        "embedders",
        "retrieval.depth",
        "controls.kinds",
        "controls.base",
    ),
    volatile="ragcourt.orchestration.llm_routes:current_record",
)
