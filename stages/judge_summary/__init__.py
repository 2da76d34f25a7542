"""The ``judge_summary`` stage: ``python -m stages judge_summary`` under DVC, a task in the
Prefect flow."""

from __future__ import annotations

from ragcourt.orchestration.stage_def import StageDef, art, arts

STAGE = StageDef(
    "judge_summary",
    "ragcourt.judging.summary:run",
    "Per-(system, question) measures side by side, per-system summary, Spearman of each\n"
    "retrieval metric with end-to-end correctness, optional UDCG-theta fit.",
    deps=(
        *arts("answers", "qa"),
        art("chunks", chunking="*"),
        *arts("verdicts", "correctness", "relevance", "udcg"),
    ),
    params=(
        "judge",
        "chunkings",
        "retrieval.relevance",
        "controls.bootstrap",
        "controls.seed",
        "llm.seed",
    ),
)
