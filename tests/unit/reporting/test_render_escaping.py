"""Rendering (reporting/stage.py): text from documents and answers is data, escaped in the
HTML report and in Markdown; a section with only notes counts as missing."""

from __future__ import annotations

from pathlib import Path

from ragcourt.reporting.model import Example, Judgement, Section, Table
from ragcourt.reporting.stage import render, section_markdown

ATTACK = '<script>alert("x")</script>'


def _sections() -> list[Section]:
    answered = Section(
        "examples",
        "Example judgements",
        facts=[("best system", "dense-k3")],
        tables=[Table(["system", "answer"], [["dense-k3", ATTACK]])],
        examples=[
            Example(
                title="q01",
                fields=[("question", "When?"), ("answer", ATTACK)],
                judgements=[Judgement("llm", "correct", "p 0.9", ATTACK)],
                outcome="correct",
            )
        ],
    )
    missing = Section("calibration", "Human agreement", notes=["no labels: run ragcourt label"])
    return [answered, missing]


def test_html_and_markdown_escape_document_text() -> None:
    html, md = render(_sections(), Path("/work/p"), generated="2024-01-01 00:00 UTC")
    assert ATTACK not in html and "&lt;script&gt;" in html
    assert "Example judgements" in html and "dense-k3" in html
    assert ATTACK not in md and "&lt;script&gt;" in md and "2024-01-01 00:00 UTC" in md
    assert "no labels: run ragcourt label" in html and "no labels: run ragcourt label" in md


def test_section_markdown_is_one_section_with_its_table() -> None:
    text = section_markdown(_sections()[0])
    assert text.endswith("\n") and not text.endswith("\n\n")
    assert "Example judgements" in text and "Human agreement" not in text
    assert "| system | answer |" in text
