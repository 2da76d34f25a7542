"""RAGElo pointwise relevance: reply parsing, dedup across systems, RR/MRR@5 at both
thresholds with unjudged passages kept unknown."""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest
from pydantic import ValidationError

from ragcourt.core.schemas import RETRIEVED
from ragcourt.judging.relevance import (
    RelevanceReply,
    mrr_per_question,
    reciprocal_rank,
    retrieved_passages,
    unique_passages,
)


def _answers() -> pl.DataFrame:
    def ret(*chunks: str) -> list[dict[str, Any]]:
        return [
            {
                "chunk_id": c,
                "rank": i,
                "score": 1.0 / i,
                "doc_id": "d",
                "char_start": 0,
                "char_end": 10,
                "text": f"text of {c}",
            }
            for i, c in enumerate(chunks, 1)
        ]

    return pl.DataFrame(
        {
            "system": ["A", "B", "A", "B"],
            "question_id": ["q1", "q1", "q2", "q2"],
            "retrieved": [ret("c1", "c2", "c3"), ret("c3", "c1"), ret("c9"), []],
        },
        schema={"system": pl.String, "question_id": pl.String, "retrieved": pl.List(RETRIEVED)},
    )


def test_unique_passages_deduplicates_across_systems() -> None:
    rows = retrieved_passages(_answers())
    assert rows.height == 6
    uniq = unique_passages(rows)
    assert uniq.select("question_id", "chunk_id", "n_systems").rows() == [
        ("q1", "c1", 2),
        ("q1", "c2", 1),
        ("q1", "c3", 2),
        ("q2", "c9", 1),
    ]
    assert retrieved_passages(_answers(), k=1).height == 3


@pytest.mark.parametrize(
    ("raw", "grade"),
    [(2, 2), (2.0, 2), ("1", 1), ("Very relevant.", 2), ("not relevant", 0)],
)
def test_relevance_reply_accepts_grade_spellings(raw: object, grade: int) -> None:
    assert RelevanceReply.model_validate({"reason": "r", "relevance": raw}).relevance == grade


@pytest.mark.parametrize("raw", [3, -1, "high", 1.5, None])
def test_relevance_reply_rejects_other_values(raw: object) -> None:
    with pytest.raises(ValidationError):
        RelevanceReply.model_validate({"reason": "r", "relevance": raw})


def test_reciprocal_rank_thresholds_and_unknowns() -> None:
    assert reciprocal_rank([0, 1, 2], threshold=1, k=5) == pytest.approx(1 / 2)
    assert reciprocal_rank([0, 1, 2], threshold=2, k=5) == pytest.approx(1 / 3)
    assert reciprocal_rank([0, 1, 2], threshold=2, k=2) == 0.0
    assert reciprocal_rank([0, None, 2], threshold=2, k=5) is None  # unjudged before hit
    assert reciprocal_rank([2, None], threshold=2, k=5) == 1.0  # hit before the unknown
    assert reciprocal_rank([0, None], threshold=1, k=5) is None  # no hit, one unknown


def test_mrr_per_question_joins_shared_judgments() -> None:
    relevance = pl.DataFrame(
        {
            "question_id": ["q1", "q1", "q1", "q2"],
            "chunk_id": ["c1", "c2", "c3", "c9"],
            "relevance": [0, 1, 2, None],
        },
        schema_overrides={"relevance": pl.Int8},
    )
    out = mrr_per_question(retrieved_passages(_answers()), relevance, k=5).sort(
        "system", "question_id"
    )
    assert out.rows() == [
        ("A", "q1", 0.5, 1 / 3, 0),  # c1=0, c2=1, c3=2
        ("A", "q2", None, None, 1),  # the only passage is unjudged
        ("B", "q1", 1.0, 1.0, 0),  # c3=2 first
    ]
