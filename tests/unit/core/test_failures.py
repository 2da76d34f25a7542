"""Loud-failure policy (ragcourt.core.failures)."""

from __future__ import annotations

import logging

import polars as pl
import pytest

from ragcourt.core.errors import StageFailed
from ragcourt.core.failures import assess, enforce, verdict
from ragcourt.core.params import FailureParams


def _frame(errors: dict[str, list[str | None]]) -> pl.DataFrame:
    rows = [(s, e) for s, es in errors.items() for e in es]
    return pl.DataFrame(rows, schema={"system": pl.String, "error": pl.String}, orient="row")


def test_counts_overall_per_system_and_reasons() -> None:
    t = assess("answers", _frame({"a": [None, "401\ntrace", "401"], "b": ["x", "x"]}))
    assert (t.rows, t.failed) == (5, 4)
    assert t.groups == {"a": (2, 3), "b": (2, 2)} and t.all_failed_groups() == ["b"]
    assert t.reasons[0] == ("401", 2)  # first line of each error, counted


def test_policy_thresholds() -> None:
    policy = FailureParams()
    half = assess("t", _frame({"a": [None, "e"], "b": [None, "e"]}))
    assert verdict("s", half, policy) is None  # 50% is not > 50%, and no system all failed
    one_dead = assess("t", _frame({"a": [None, None, None, None], "b": ["e"]}))
    msg = verdict("s", one_dead, policy)
    assert msg is not None and "every row failed for 'b'" in msg and "\n" not in msg
    assert verdict("s", one_dead, FailureParams(fail_on_system=False)) is None
    most = assess("t", _frame({"a": ["e", "e", None]}), group=None)
    assert "2/3 rows failed (67% > failure.max_error_rate 50%)" in (
        verdict("s", most, policy) or ""
    )
    assert verdict("s", assess("t", _frame({})), policy) is None  # no rows: nothing to judge


def test_enforce_logs_below_threshold_and_raises_above(caplog: pytest.LogCaptureFixture) -> None:
    policy = FailureParams()
    with caplog.at_level(logging.WARNING, logger="ragcourt.failures"):
        enforce("judge", [assess("verdicts", _frame({"a": [None, None, "e"]}))], policy)
    assert "judge: verdicts: 1/3 rows failed" in caplog.text
    with pytest.raises(StageFailed, match=r"^judge: udcg: 3/3 rows failed"):
        enforce("judge", [assess("udcg", _frame({"a": ["e", "e", "e"]}))], policy)
