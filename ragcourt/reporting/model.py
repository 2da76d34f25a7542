"""The report's content model: sections of facts, tables, figures and examples.

Templates (HTML and Markdown) render these plain dataclasses; nothing here formats HTML.
Numbers are formatted once, by :func:`fmt`, so both outputs show the same figures.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import polars as pl


def fmt(value: Any, digits: int = 3) -> str:
    """Human formatting: None/NaN -> '–', floats to ``digits`` decimals (integral floats
    and large values with fewer), bools as yes/no, everything else ``str``."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if math.isnan(value):
            return "–"
        if abs(value) >= 100:
            return f"{value:.0f}"
        return f"{value:.{digits}f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def pct(value: float | None) -> str:
    return (
        "–"
        if value is None or (isinstance(value, float) and math.isnan(value))
        else (f"{100 * value:.1f}%")
    )


class MarkdownBlock(str):
    """Markdown this module built from escaped parts: the Markdown templates print it as is."""

    __slots__ = ()


_MD_ESCAPES = str.maketrans(
    {
        "\\": "\\\\",
        "&": "&amp;",
        "<": "&lt;",
        ">": "&gt;",
        "[": "\\[",
        "]": "\\]",
        "|": "\\|",
    }
)


def md_text(text: object) -> str:
    """``text`` as inert Markdown: HTML-escaped (``& < >``: no tag, no ``<script>``, no
    ``<img onerror>``, no autolink), link and image brackets and table pipes backslash-escaped,
    backslashes doubled so no escape is undone."""
    return str(text).translate(_MD_ESCAPES)


def md_cell(text: object) -> str:
    """:func:`md_text` on one line (line breaks become spaces), for a table cell."""
    return " ".join(md_text(text).splitlines())


@dataclass
class Table:
    columns: list[str]
    rows: list[list[str]]
    caption: str = ""

    @classmethod
    def from_frame(cls, df: pl.DataFrame, caption: str = "", digits: int = 3) -> Table:
        rows = [[fmt(v, digits) for v in row] for row in df.iter_rows()]
        return cls(columns=list(df.columns), rows=rows, caption=caption)

    def markdown(self) -> MarkdownBlock:
        """The table as GitHub Markdown, every cell through :func:`md_cell`."""
        head = "| " + " | ".join(md_cell(c) for c in self.columns) + " |"
        sep = "|" + "|".join("---" for _ in self.columns) + "|"
        body = ["| " + " | ".join(md_cell(c) for c in r) + " |" for r in self.rows]
        return MarkdownBlock("\n".join([head, sep, *body]))


@dataclass
class Figure:
    png_base64: str
    alt: str
    caption: str = ""
    name: str = ""  # file stem: the report stage also writes it as figures/<name>.png

    def markdown(self, folder: str) -> MarkdownBlock:
        """A Markdown image of the written file ``<folder>/<name>.png`` (alt text escaped)."""
        return MarkdownBlock(f"![{md_cell(self.alt)}]({folder}/{self.name}.png)")


@dataclass
class Lead:
    """One headline sentence; ``tone`` (good / warn / bad / plain) colours it in the HTML."""

    text: str
    tone: str = "plain"


@dataclass
class Judgement:
    """One judge's view inside an example."""

    judge: str
    verdict: str
    detail: str  # score / probabilities
    reasoning: str


@dataclass
class Example:
    title: str
    fields: list[tuple[str, str]]  # question, reference, answer, ...
    judgements: list[Judgement]
    outcome: str


@dataclass
class Section:
    key: str
    title: str
    intro: str = ""
    lead: list[Lead] = field(default_factory=list)  # headline sentences, shown first
    facts: list[tuple[str, str]] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    examples: list[Example] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # caveats and "missing artifact" notices

    @property
    def empty(self) -> bool:
        return not (self.lead or self.facts or self.tables or self.figures or self.examples)
