"""The ``report`` stage: ``python -m stages report`` under DVC, a task in the Prefect flow."""

from __future__ import annotations

from ragcourt.orchestration.stage_def import Dep, StageDef, art, arts

STAGE = StageDef(
    "report",
    "ragcourt.reporting.stage:run",
    "Self-contained HTML report (plots inlined, the headline plots also as PNG) +\n"
    "Markdown twin, and the headline figures as a metric. A missing artifact becomes a\n"
    "note in its section, never a failure.",
    deps=(
        *arts(
            "documents",
            "qa",
            "qa_rejected",
            "qa_summary",
            "retrieval_summary",
            "answers",
            "verdicts",
            "correctness",
            "judge_summary",
            "system_summary",
            "metric_correlation",
            "pairwise",
            "leaderboard",
            "tournament_summary",
            "calibration_summary",
            "calibration_agreement",
            "calibration_ppi_systems",
            "race_summary",
        ),
        art("embed_stats", chunking="*", embedder="*"),
        art("index_stats", chunking="*", embedder="*"),
        Dep(param="llm.metrics_dir"),
    ),
    params=(
        "chunkings",
        "embedders",
        "llm.model",
        "llm.metrics_dir",
        "tournament.initial_elo",
        "qagen.reference_chunking",
        "retrieval.relevance",
        "retrieval.bm25",
        "gate",
    ),
)
