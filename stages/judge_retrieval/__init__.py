"""The ``judge_retrieval`` stage: ``python -m stages judge_retrieval`` under DVC, a task in the
Prefect flow."""

from __future__ import annotations

from ragcourt.orchestration.stage_def import EMBEDDERS, LLMS, Dep, StageDef, arts

STAGE = StageDef(
    "judge_retrieval",
    "ragcourt.judging.retrieval_stage:run",
    "0/1/2 relevance of every retrieved passage (once per question x chunk across\n"
    "systems; trained judge or RAGElo), P(NO-RESPONSE | question, passage) and UDCG per\n"
    "(system, question).",
    deps=(Dep(prompts="judge"), *arts("answers", "qa", "llm_routes")),
    params=(
        "judge.relevance_grader",
        "judge.relevance_settings",
        "judge.relevance_model",
        "judge.trained_weights",
        "judge.prompt_version",
        "judge.udcg",
        "llm",
        "failure",
        "judge.judges",
        "judge.correctness_mode",
        "scale.shard_questions",
    ),
    models=(EMBEDDERS, LLMS),  # the trained relevance judge embeds
    llm_metrics=True,
    shards="ragcourt.judging.retrieval_stage:shards",
)
