"""Publish pipeline results as Prefect artifacts (shown on the flow run's Artifacts tab).

Keys (stable, so the UI keeps a version history per key): ``ragcourt-leaderboard`` (table),
``ragcourt-retrieval-summary`` (table), ``ragcourt-dafe-summary`` (markdown) and
``ragcourt-report`` (the Markdown report). Artifacts are built from the same report sections
as ``data/report/report.html``; results that do not exist yet are skipped, not faked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
from prefect.artifacts import create_markdown_artifact, create_table_artifact

from stages.params import load_params
from stages.report import MD_PATH, section_markdown
from stages.reporting import sections
from stages.reporting.artifacts import Artifacts


def _records(df: pl.DataFrame) -> list[dict[str, Any]]:
    rounded = df.with_columns(pl.col(pl.Float64).round(4))
    return rounded.to_dicts()


def publish_artifacts(root: Path, params_path: str = "params.yaml") -> list[str]:
    """Create the artifacts whose inputs exist under ``root``; return the keys created."""
    params = load_params(root / params_path)
    art = Artifacts(root=root, metrics_dir=params.llm.metrics_dir)
    created: list[str] = []
    board = art.table("leaderboard")
    if board is not None:
        create_table_artifact(
            table=_records(board.sort("rank")),
            key="ragcourt-leaderboard",
            description="Swiss Elo and Bradley-Terry with 95% bootstrap CIs (leaderboard.parquet)",
        )
        created.append("ragcourt-leaderboard")
    summary = art.table("retrieval_summary")
    if summary is not None:
        create_table_artifact(
            table=_records(summary.drop("measure")),
            key="ragcourt-retrieval-summary",
            description="Mean retrieval metrics per chunking, embedder and retriever",
        )
        created.append("ragcourt-retrieval-summary")
    if art.json("judge_summary") is not None:
        create_markdown_artifact(
            markdown=section_markdown(sections.dafe(art)),
            key="ragcourt-dafe-summary",
            description="DAFE agreement, arbitrator calls and judge calls saved",
        )
        created.append("ragcourt-dafe-summary")
    report_md = root / MD_PATH
    if report_md.is_file():
        create_markdown_artifact(
            markdown=report_md.read_text(encoding="utf-8"),
            key="ragcourt-report",
            description=f"The Markdown report ({MD_PATH}; the HTML page has the figures)",
        )
        created.append("ragcourt-report")
    return created
