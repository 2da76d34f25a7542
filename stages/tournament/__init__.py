"""The ``tournament`` stage: ``python -m stages tournament`` under DVC, a task in the
Prefect flow."""

from __future__ import annotations

from ragcourt.orchestration.stage_def import LLMS, Dep, EntryOption, StageDef, arts

STAGE = StageDef(
    "tournament",
    "ragcourt.tournament.stage:run",
    "DICE Swiss tournament + round-robin, Elo and Bradley-Terry with bootstrap CIs. The\n"
    "correctness table is read only by the correctness_margin judge.",
    deps=(Dep(prompts="tournament"), *arts("answers", "qa", "correctness", "llm_routes")),
    params=(
        "tournament",
        "llm",
        "failure",
    ),
    models=(LLMS,),
    llm_metrics=True,
    options=(
        EntryOption("single", "evaluate one system against reference tiers", metavar="SYSTEM"),
        EntryOption(
            "reference_leaderboard",
            "leaderboard.parquet of an earlier tournament (with --single)",
            metavar="PATH",
            requires="single",
        ),
    ),
)
