"""Synthetic inputs for the tournament tests (answers, qa, correctness tables)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from ragcourt.core.schemas import frame_schema

RUBRIC = np.array([0.0, 0.3, 0.5, 0.7, 1.0])


def table(name: str, rows: list[dict[str, Any]]) -> pl.DataFrame:
    """Rows for a declared table; columns a row leaves out are null."""
    return pl.DataFrame(rows, schema=frame_schema(name))


def qa_frame(n_questions: int) -> pl.DataFrame:
    return table(
        "qa",
        [
            {
                "question_id": f"q{j:02d}",
                "question": f"What is fact number {j}?",
                "reference_answers": [f"Fact {j} is {j * 7}."],
                "doc_id": "d0",
            }
            for j in range(n_questions)
        ],
    )


def answers_frame(systems: list[str], n_questions: int, abstain_every: int = 0) -> pl.DataFrame:
    rows = []
    for s in systems:
        for j in range(n_questions):
            abstained = bool(abstain_every) and j % abstain_every == 0
            rows.append(
                {
                    "system": s,
                    "question_id": f"q{j:02d}",
                    "answer": "NO-RESPONSE" if abstained else f"{s} says fact {j} is {j * 7}.",
                    "abstained": abstained,
                    "retrieved": [
                        {
                            "chunk_id": f"c{j}-{r}",
                            "rank": r,
                            "score": 1.0 / r,
                            "doc_id": "d0",
                            "char_start": 0,
                            "char_end": 10,
                            "text": f"Passage {r}: fact {j} is {j * 7}.",
                        }
                        for r in (1, 2)
                    ],
                    "query_variants": [],
                    "model": "local/smollm2-135m",
                }
            )
    return table("answers", rows)


def correctness_frame(strengths: dict[str, float], n_questions: int, seed: int = 0) -> pl.DataFrame:
    """Rubric scores: system i's answer quality = strength + noise, snapped to the rubric grid."""
    rng = np.random.default_rng(seed)
    rows = []
    for s, mu in strengths.items():
        for j in range(n_questions):
            x = float(np.clip(mu + rng.normal(0, 0.15), 0, 1))
            rows.append(
                {
                    "system": s,
                    "question_id": f"q{j:02d}",
                    "correctness": float(RUBRIC[np.abs(RUBRIC - x).argmin()]),
                    "rationale": "synthetic",
                    "error": None,
                    "form": "probability",
                    "grading_method": "logits",
                }
            )
    return pl.DataFrame(
        rows,
        schema={
            "system": pl.String,
            "question_id": pl.String,
            "correctness": pl.Float64,
            "rationale": pl.String,
            "error": pl.String,
            "form": pl.String,
            "grading_method": pl.String,
        },
    )


def scripted_tournament_run(
    tmp: Path,
    strengths: dict[str, float],
    controls: dict[str, str],
    n_questions: int,
    seed: int = 3,
) -> Path:
    """A workspace after a real tournament stage on scripted correctness scores (the
    ``correctness_margin`` judge reads them: no model); ``controls`` marks control systems."""
    from ragcourt.orchestration.params import load_params
    from ragcourt.tournament import stage as tournament

    root = Path(__file__).resolve().parents[1]
    shutil.copy(root / "params.yaml", tmp / "params.yaml")
    shutil.copytree(root / "configs", tmp / "configs")
    for d in ("answers", "qa", "judge"):
        (tmp / "data" / d).mkdir(parents=True)
    answers = answers_frame(list(strengths), n_questions).with_columns(
        pl.col("system").replace_strict(controls, default=None).alias("control")
    )
    answers.write_parquet(tmp / "data/answers/answers.parquet")
    qa_frame(n_questions).write_parquet(tmp / "data/qa/qa.parquet")
    correctness_frame(strengths, n_questions, seed=seed).write_parquet(
        tmp / "data/judge/correctness.parquet"
    )
    cwd = Path.cwd()
    try:
        os.chdir(tmp)
        tournament.run(load_params("params.yaml"))
    finally:
        os.chdir(cwd)
    return tmp
