"""Cells of the CSV/TSV files ragcourt writes are text, never spreadsheet formulas.

A cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is a formula in
Excel, LibreOffice and Google Sheets (CSV injection). :func:`to_cell` prefixes such a cell with
a single quote (the OWASP advice); it also prefixes a cell that already starts with a single
quote, so the escaping is unambiguous: every written cell that starts with ``'`` carries one
added quote. :func:`from_cell` removes it again, so ``from_cell(to_cell(s)) == s`` for every
string ``s``. A cell a person typed (``'tis``, a quote followed by an ordinary character) is
left as it is by :func:`from_cell`.
"""

from __future__ import annotations

from collections.abc import Iterable

#: first characters a spreadsheet reads as the start of a formula
FORMULA_STARTS = frozenset("=+-@\t\r")
QUOTE = "'"
_ESCAPED = FORMULA_STARTS | {QUOTE}


def to_cell(value: object) -> str:
    """``value`` as the text of one CSV cell that no spreadsheet evaluates (None -> "")."""
    text = "" if value is None else str(value)
    return QUOTE + text if text[:1] in _ESCAPED else text


def from_cell(cell: str) -> str:
    """The text :func:`to_cell` was given: one leading quote removed when a formula start or a
    second quote follows it; any other cell unchanged."""
    return cell[1:] if cell[:1] == QUOTE and cell[1:2] in _ESCAPED else cell


def to_row(values: Iterable[object]) -> list[str]:
    """:func:`to_cell` of every value of a row."""
    return [to_cell(v) for v in values]
