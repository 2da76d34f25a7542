"""The ``judge`` stage: ``python -m stages judge`` under DVC, a task in the Prefect flow."""

from __future__ import annotations

from ragcourt.orchestration.stage_def import EMBEDDERS, LLMS, Dep, StageDef, arts

STAGE = StageDef(
    "judge",
    "ragcourt.judging.answers_stage:run",
    "DAFE verdicts (two primaries, the arbitrator only on disagreement) and correctness.\n"
    "Answers with an error are carried as error rows. Re-runs hit the LLM cache.",
    deps=(Dep(prompts="judge"), *arts("answers", "qa", "llm_routes")),
    params=(
        "judge.judges",
        "judge.primaries",
        "judge.arbitrator",
        "judge.correctness_mode",
        "judge.correctness_settings",
        "judge.correctness_model",
        "judge.trained_weights",
        "judge.prompt_version",
        "llm",
        "embedders",
        "failure",
        "judge.relevance_grader",
        "judge.reason",
        "scale.shard_questions",
    ),
    models=(EMBEDDERS, LLMS),
    llm_metrics=True,
    shards="ragcourt.judging.answers_stage:shards",
)
