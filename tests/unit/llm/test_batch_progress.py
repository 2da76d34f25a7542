"""Batch progress off a terminal (a log file, Prefect's logs): a line with the ETA at most every
``log_every_s`` seconds, then one line at the end."""

from __future__ import annotations

import logging

import pytest

from ragcourt.llm.batching import Progress


def test_off_a_terminal_progress_lines_carry_the_eta(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="ragcourt")
    p = Progress("judge relevance", 4, log_every_s=0.0)
    for _ in range(4):
        p.advance()
    p.close("0 failed, 1.0s")
    lines = [r.getMessage() for r in caplog.records]
    assert [ln.split(",")[0] for ln in lines[:3]] == [
        "judge relevance: 1/4 requests",
        "judge relevance: 2/4 requests",
        "judge relevance: 3/4 requests",
    ]
    assert all("ETA" in ln for ln in lines[:3])
    assert lines[3] == "judge relevance: 4 requests, 0 failed, 1.0s"


def test_progress_lines_are_spaced(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="ragcourt")
    p = Progress("answers", 50, log_every_s=3600.0)
    for _ in range(50):
        p.advance()
    assert not caplog.records  # nothing before the interval, and nothing for the last one
