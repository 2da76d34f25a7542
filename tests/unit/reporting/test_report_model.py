"""The report's content model (reporting/model.py): one number format for both outputs,
Markdown tables that keep a cell's text in its cell, and when a section counts as empty."""

from __future__ import annotations

import math

import polars as pl
import pytest

from ragcourt.reporting.model import Figure, Section, Table, fmt, pct


@pytest.mark.parametrize(
    ("value", "digits", "text"),
    [
        (None, 3, "–"),
        (math.nan, 3, "–"),
        (True, 3, "yes"),
        (False, 3, "no"),
        (0.12345, 3, "0.123"),
        (0.12345, 1, "0.1"),
        (1234.5, 3, "1234"),  # large floats lose their decimals (banker's rounding of .5)
        (-250.4, 3, "-250"),
        (1234567, 3, "1,234,567"),
        ("dense-k3", 3, "dense-k3"),
    ],
)
def test_fmt(value: object, digits: int, text: str) -> None:
    assert fmt(value, digits) == text


def test_pct() -> None:
    assert [pct(0.5), pct(0.1234), pct(1.0), pct(0.0)] == ["50.0%", "12.3%", "100.0%", "0.0%"]
    assert pct(None) == "–" and pct(math.nan) == "–"


def test_table_from_frame_formats_every_cell_once() -> None:
    df = pl.DataFrame({"system": ["a", "b"], "elo": [1512.25, 1487.75], "rate": [0.5, None]})
    t = Table.from_frame(df, caption="board", digits=2)
    assert t.columns == ["system", "elo", "rate"] and t.caption == "board"
    assert t.rows == [["a", "1512", "0.50"], ["b", "1488", "–"]]


def test_table_markdown_escapes_pipes_and_newlines_in_cells() -> None:
    t = Table(columns=["sys|tem", "answer"], rows=[["a", "x | y\nz"]])
    assert t.markdown().splitlines() == [
        "| sys\\|tem | answer |",
        "|---|---|",
        "| a | x \\| y z |",
    ]


def test_section_is_empty_without_content_notes_do_not_count() -> None:
    s = Section("k", "Title", intro="intro", notes=["missing artifact: data/x.parquet"])
    notes_only = s.empty
    s.facts.append(("systems", "3"))
    assert (notes_only, s.empty) == (True, False)
    assert not Section("k", "T", figures=[Figure("AAAA", "alt")]).empty
    assert not Section("k", "T", tables=[Table(["a"], [])]).empty
