"""The ``race`` stage: ``python -m stages race`` under DVC, a task in the Prefect flow."""

from __future__ import annotations

from ragcourt.answering.declared import ANSWERING_PARAMS
from ragcourt.orchestration.stage_def import EMBEDDERS, LLMS, Dep, StageDef, art, arts

STAGE = StageDef(
    "race",
    "ragcourt.tournament.race_live:run",
    "The adaptive race: questions in rounds, only the survivors answer and are judged, a\n"
    "system significantly behind is dropped (race.*). Every round's answers, grades and\n"
    "pairwise judgements are kept (persist), so a killed race resumes and a re-run makes\n"
    "no model call.",
    deps=(
        Dep(prompts="answer"),
        Dep(prompts="judge"),
        Dep(prompts="tournament"),
        Dep(param="systems_file"),
        *arts("qa", "documents", "llm_routes"),
        art("chunks", chunking="*"),
        art("bm25_index", chunking="*"),
        art("embeddings", chunking="*", embedder="*"),
        art("index", chunking="*", embedder="*"),
    ),
    params=("race", *ANSWERING_PARAMS, "judge", "tournament"),
    models=(EMBEDDERS, LLMS),
    llm_metrics=True,
    system_inputs=True,
)
