"""``data/answers/summary.json``: the pydantic model keeps the keys and values the stage wrote
before it had one (the expected dict below was computed with the pre-model ``summarise``)."""

from __future__ import annotations

import polars as pl
import pytest
from pydantic import ValidationError

from ragcourt.answering.summaries import AnswersSummary, SystemAnswerSummary, summarise

ANSWERS = pl.DataFrame(
    {
        "system": ["a", "a", "a", "b", "b", "c"],
        "question_id": ["q1", "q2", "q3", "q1", "q2", "q1"],
        "answer": ["x", "NO-RESPONSE", None, "y", "z", None],
        "abstained": [False, True, None, False, False, None],
        "error": [None, None, "boom", None, None, "boom"],
        "latency_s": [0.5, 0.25, 0.125, 1.0, 3.0, 0.0],
        "prompt_tokens": [10, 20, 30, 5, 6, 0],
        "completion_tokens": [1, 2, 0, 3, 4, 0],
    }
)
# Computed with the pre-model code (summarise returning plain dicts) on ANSWERS (no
# ``cached`` column: no row replayed), plus the later keys cached / latency_rows.
EXPECTED = {
    "a": {"abstained": 1, "abstention_rate": 0.5, "answered": 2, "completion_tokens": 3,
          "errors": 1, "mean_latency_s": 0.2916666666666667, "prompt_tokens": 60,
          "questions": 3, "cached": 0, "latency_rows": 3},
    "b": {"abstained": 0, "abstention_rate": 0.0, "answered": 2, "completion_tokens": 7,
          "errors": 0, "mean_latency_s": 2.0, "prompt_tokens": 11, "questions": 2,
          "cached": 0, "latency_rows": 2},
    "c": {"abstained": 0, "abstention_rate": 0.0, "answered": 0, "completion_tokens": 0,
          "errors": 1, "mean_latency_s": 0.0, "prompt_tokens": 0, "questions": 1,
          "cached": 0, "latency_rows": 1},
}  # fmt: skip


def test_summary_keys_values_and_order_are_unchanged() -> None:
    dumped = summarise(ANSWERS).model_dump(mode="json")
    assert dumped == EXPECTED
    assert list(dumped) == ["a", "b", "c"]  # systems in row (config) order
    assert all(type(v) is int for s in dumped.values() for k, v in s.items() if "rate" not in k
               and "latency" not in k)  # fmt: skip
    assert summarise(ANSWERS.head(0)).model_dump(mode="json") == {}


def test_summary_reads_back_and_rejects_unknown_keys() -> None:
    parsed = AnswersSummary.model_validate(EXPECTED)
    assert parsed.root["a"] == SystemAnswerSummary.model_validate(EXPECTED["a"])
    with pytest.raises(ValidationError):
        AnswersSummary.model_validate({"a": {**EXPECTED["a"], "extra": 1}})


def test_cached_rows_are_counted_and_left_out_of_the_mean_latency() -> None:
    df = ANSWERS.with_columns(
        cached=pl.Series([True, False, None, True, True, False], dtype=pl.Boolean)
    )
    dumped = summarise(df).model_dump(mode="json")
    assert dumped["a"]["cached"] == 1 and dumped["a"]["latency_rows"] == 2
    assert dumped["a"]["mean_latency_s"] == pytest.approx((0.25 + 0.125) / 2)
    assert dumped["b"]["cached"] == 2 and dumped["b"]["mean_latency_s"] == 0.0
