"""The ``qagen`` stage: ``python -m stages qagen`` under DVC, a task in the Prefect flow."""

from __future__ import annotations

from ragcourt.orchestration.stage_def import EMBEDDERS, LLMS, Dep, StageDef, art

STAGE = StageDef(
    "qagen",
    "ragcourt.qagen.stage:run",
    "Synthetic QA with answerability / faithfulness / relevance / duplicate filters (or\n"
    "the user's qagen.qa_file, validated). A set qagen.qa_file / few_shot_file is a\n"
    "file dependency: editing it re-runs qagen (regenerate after setting or clearing one).",
    deps=(
        art("llm_routes"),
        Dep(prompts="qagen"),
        art("documents"),
        art("chunks", chunking="@qagen.reference_chunking", unless="qagen.qa_file"),
        Dep(param="qagen.qa_file", optional=True),
        Dep(param="qagen.few_shot_file", optional=True),
    ),
    params=(
        "qagen",
        "llm",
        "embedders",
        "judge.trained_weights",
        "failure",
    ),
    models=(EMBEDDERS, LLMS),  # near-duplicate removal embeds questions
    llm_metrics=True,
)
