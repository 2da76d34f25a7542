"""The ``shuffled`` answer control (spec §3): each question gets the base system's
row (answer, passages, model, accounting) for a different question.

The donor of question ``i`` (QA order) is ``perm[i]`` where ``perm`` is a random cyclic
permutation (Sattolo's algorithm, so ``perm[i] != i`` for every ``i``: a derangement) drawn by
``numpy.random.default_rng(s)``, ``s`` = first 8 bytes of sha256("<controls.seed>:<system>").
A donor whose base row is an error row gives an error row; a QA set of one question has no
derangement: its row is an error row, never the question's own answer.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from ragcourt.answering.control_retrieval import question_seed
from ragcourt.answering.generation import ANSWER_SCHEMA

ONE_QUESTION = "shuffled: a derangement needs at least 2 questions (got 1)"


def derangement(n: int, seed: int, name: str) -> list[int]:
    """A seeded random cyclic permutation of ``range(n)`` (no fixed point for n >= 2)."""
    rng = np.random.default_rng(question_seed(seed, name))
    perm = list(range(n))
    for i in range(n - 1, 0, -1):  # Sattolo: j < i, so the result is one n-cycle
        j = int(rng.integers(0, i))
        perm[i], perm[j] = perm[j], perm[i]
    return perm


def shuffled_answers(
    name: str, base: str, base_rows: pl.DataFrame, qa: pl.DataFrame, seed: int
) -> pl.DataFrame:
    """Rows of table ``answers`` for the shuffled control ``name`` built on ``base``'s rows."""
    qids = qa["question_id"].to_list()
    by_q = {r["question_id"]: r for r in base_rows.iter_rows(named=True)}
    perm = derangement(len(qids), seed, name)
    rows: list[dict[str, Any]] = []
    for i, qid in enumerate(qids):
        row: dict[str, Any] = {
            "system": name,
            "question_id": qid,
            "answer": None,
            "abstained": None,
            "retrieved": [],
            "query_variants": [],
            "latency_s": 0.0,
            "prompt_tokens": 0,
            "completion_tokens": 0,
            "model": None,
        }
        donor = qids[perm[i]]
        donor_row = by_q.get(donor)
        if len(qids) == 1:
            row["error"] = ONE_QUESTION
        elif donor_row is None:
            row["error"] = f"shuffled: base system '{base}' has no row for question '{donor}'"
        elif donor_row["error"] is not None:
            row["error"] = f"shuffled: base answer to question '{donor}' failed"
            row["model"] = donor_row["model"]
        else:
            keep = ("answer", "abstained", "retrieved", "query_variants", "model")
            row |= {k: donor_row[k] for k in keep} | {"error": None}
        rows.append(row)
    return pl.DataFrame(rows, schema=ANSWER_SCHEMA).select(list(ANSWER_SCHEMA))
