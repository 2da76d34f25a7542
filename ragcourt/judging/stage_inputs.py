"""The inputs every judge stage reads: the answers of all systems and the QA set."""

from __future__ import annotations

import polars as pl

from ragcourt.core import catalog
from ragcourt.core.errors import RagcourtError
from ragcourt.core.io import read_table


def read_answers_and_qa() -> tuple[pl.DataFrame, pl.DataFrame]:
    """``answers`` and ``qa`` tables (paths relative to the cwd); no answers is an error."""
    answers_path = catalog.path("answers")
    answers = read_table(answers_path, "answers")
    qa = read_table(catalog.path("qa"), "qa")
    if answers.is_empty():
        raise RagcourtError(f"{answers_path}: no answers to judge")
    return answers, qa
