"""Text helpers the report sections share (reporting/sections/common.py)."""

from __future__ import annotations

import polars as pl

from ragcourt.reporting.sections.common import ci_text, tau_text, unranked
from ragcourt.tournament.summaries import KendallTau


def test_ci_text() -> None:
    assert ci_text(0.5, 0.25, 0.75) == "0.500 [0.250, 0.750]"
    assert ci_text(1500.0, 1480.25, 1520.5) == "1500 [1480, 1520]"
    assert ci_text(0.5, None, 0.75) == "0.500"  # no interval without both bounds
    assert ci_text(None, 0.1, 0.2) == "–"


def test_tau_text() -> None:
    assert tau_text(KendallTau(tau_b=2 / 3, p_value=0.1742)) == "0.667 (p 0.174)"
    assert tau_text(KendallTau(tau_b=0.5, p_value=None)) == "0.500"
    assert tau_text(KendallTau(tau_b=None, p_value=None)) == "undefined (tied ratings)"
    assert tau_text(None) == "–"


def test_unranked_only_when_no_system_has_a_rank() -> None:
    ranks = pl.Series("rank", [None, None], dtype=pl.Int64)
    assert unranked(pl.DataFrame({"system": ["a", "b"], "rank": ranks}))
    assert not unranked(pl.DataFrame({"system": ["a", "b"], "rank": [1, None]}))
