"""Publish pipeline results as Prefect artifacts (shown on the flow run's Artifacts tab).

Keys (stable, so the UI keeps a version history per key): ``ragcourt-leaderboard`` (table),
``ragcourt-retrieval-summary`` (table), ``ragcourt-dafe-summary`` (markdown) and
``ragcourt-report`` (the Markdown report). Artifacts are built from the same report sections
as ``data/report/report.html``; results that do not exist yet are skipped, not faked.

Only the results of the stages the run covered are published (:data:`ARTIFACT_STAGE`: the
stage whose output each artifact shows), so ``--until retrieval_eval`` never republishes an
older run's leaderboard as if it were this run's.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

import polars as pl
from prefect.artifacts import create_markdown_artifact, create_table_artifact

from ragcourt.core.catalog import DEFAULT_PARAMS_FILE
from ragcourt.orchestration.params import load_params
from ragcourt.reporting import sections
from ragcourt.reporting.artifacts import Artifacts
from ragcourt.reporting.stage import MD_PATH, section_markdown


def _records(df: pl.DataFrame) -> list[dict[str, Any]]:
    rounded = df.with_columns(pl.col(pl.Float64).round(4))
    return rounded.to_dicts()


#: (artifact key, catalog table, the rows shown, description) of the table artifacts
TABLE_ARTIFACTS: tuple[tuple[str, str, Callable[[pl.DataFrame], pl.DataFrame], str], ...] = (
    (
        "ragcourt-leaderboard",
        "leaderboard",
        lambda df: df.sort("rank"),
        "Swiss Elo and Bradley-Terry with 95% bootstrap CIs (leaderboard.parquet)",
    ),
    (
        "ragcourt-retrieval-summary",
        "retrieval_summary",
        lambda df: df.drop("measure"),
        "Mean retrieval metrics per chunking, embedder and retriever",
    ),
)

ARTIFACT_STAGE: dict[str, str] = {
    "ragcourt-leaderboard": "tournament",
    "ragcourt-retrieval-summary": "retrieval_eval",
    "ragcourt-dafe-summary": "judge",
    "ragcourt-report": "report",
}


def publish_artifacts(
    root: Path, params_path: str = DEFAULT_PARAMS_FILE, stages: Collection[str] | None = None
) -> list[str]:
    """Create the artifacts whose stage is in ``stages`` (default: every stage) and whose
    inputs exist under ``root`` (``params_path`` relative to it); return the keys created."""
    params = load_params(root / params_path)
    art = Artifacts(root=root, metrics_dir=params.llm.metrics_dir)
    created: list[str] = []

    def wanted(key: str) -> bool:
        return stages is None or ARTIFACT_STAGE[key] in stages

    for key, table, shown, description in TABLE_ARTIFACTS:
        df = art.table(table) if wanted(key) else None
        if df is not None:
            create_table_artifact(table=_records(shown(df)), key=key, description=description)
            created.append(key)
    if wanted("ragcourt-dafe-summary") and art.judge_summary() is not None:
        create_markdown_artifact(
            markdown=section_markdown(sections.dafe(art)),
            key="ragcourt-dafe-summary",
            description="DAFE agreement, arbitrator calls and judge calls saved",
        )
        created.append("ragcourt-dafe-summary")
    report_md = root / MD_PATH
    if wanted("ragcourt-report") and report_md.is_file():
        create_markdown_artifact(
            markdown=report_md.read_text(encoding="utf-8"),
            key="ragcourt-report",
            description=f"The Markdown report ({MD_PATH}; the HTML page has the figures)",
        )
        created.append("ragcourt-report")
    return created
