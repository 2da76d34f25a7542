"""The convention judging and the report use to tell "no contexts supplied" apart."""

from __future__ import annotations

import polars as pl

from ragcourt.answering.external.replies import Passage, Reply
from ragcourt.answering.external.rows import answer_row, error_row, rows_frame
from ragcourt.answering.generation import ANSWER_SCHEMA
from ragcourt.core.provenance import (
    NO_CONTEXTS_SUPPLIED,
    NO_RETRIEVED_PASSAGES,
    contexts_missing,
    has_contexts,
    retrieval_gap,
    systems_without_contexts,
)


def _builtin(system: str, qid: str, n_passages: int) -> dict[str, object]:
    hit = {"chunk_id": "c:d:0", "rank": 1, "score": 1.0, "doc_id": "d", "char_start": 0,
           "char_end": 4, "text": "text"}  # fmt: skip
    return {"system": system, "question_id": qid, "answer": "a", "abstained": False,
            "retrieved": [hit] * n_passages, "query_variants": [], "latency_s": 0.1,
            "prompt_tokens": 1, "completion_tokens": 1, "model": "scripted/x",
            "error": None}  # fmt: skip


def test_gap_labels() -> None:
    answers = pl.concat(
        [
            pl.DataFrame([_builtin("b", "q1", 1), _builtin("b", "q2", 0)], schema=ANSWER_SCHEMA),
            rows_frame(
                [
                    answer_row("ext", "external:http", "q1", Reply("x"), 0.1),
                    error_row("ext", "external:http", "q2", "HTTP 500"),
                    answer_row("ctx", "external:python", "q1", Reply("x", (Passage("p"),)), 0.1),
                    answer_row("ctx", "external:python", "q2", Reply("y"), 0.1),
                ]
            ),
        ]
    )
    out = answers.select(
        "system",
        has_contexts().alias("has"),
        contexts_missing().alias("missing"),
        retrieval_gap().alias("gap"),
    )
    assert out.rows() == [
        ("b", True, False, None),
        ("b", False, False, NO_RETRIEVED_PASSAGES),
        ("ext", False, True, NO_CONTEXTS_SUPPLIED),
        ("ext", False, True, NO_CONTEXTS_SUPPLIED),
        ("ctx", True, False, None),
        ("ctx", False, True, NO_CONTEXTS_SUPPLIED),
    ]
    assert systems_without_contexts(answers) == ["ext"]
    assert systems_without_contexts(answers.head(0)) == []
