"""report.md and the Prefect markdown sections carry untrusted text (answers, questions,
judge reasoning, system names) as inert Markdown: no raw HTML, no link or image, no table
cell split by a pipe."""

from __future__ import annotations

import re
from pathlib import Path

import markdown
import pytest

from ragcourt.reporting.model import Example, Judgement, Section, Table, md_text
from ragcourt.reporting.stage import render, section_markdown

INJECTIONS = [
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(1)">',
    "<a href='javascript:alert(1)'>x</a>",
    "[click](javascript:alert(1))",
    "![pixel](http://evil.example/track.png)",
    "\\[still a link](http://evil.example)",
    "<http://evil.example/auto>",
    "a | b | c",
    "&lt;script&gt; already escaped",
]


def _section(text: str) -> Section:
    return Section(
        "examples",
        f"Examples {text}",
        intro=f"intro {text}",
        facts=[(f"fact {text}", text)],
        tables=[Table(["system", "answer"], [[text, f"{text}\nsecond line"]], caption=text)],
        examples=[
            Example(
                title=text,
                fields=[("question", text), ("answer", text)],
                judgements=[Judgement(text, "correct", text, f"{text}\n{text}")],
                outcome=text,
            )
        ],
        notes=[text],
    )


def _rendered_html(md: str) -> str:
    return markdown.markdown(md, extensions=["tables"])


@pytest.mark.parametrize("text", INJECTIONS)
def test_markdown_outputs_render_no_tag_link_or_image(text: str) -> None:
    _, md = render([_section(text)], Path("/w"), generated="2024-01-01 00:00 UTC")
    for out in (md, section_markdown(_section(text))):
        html = _rendered_html(out)
        assert not re.search(r"<(script|img|a)\b", html), html
        # the table keeps two columns: the pipes in the cells are escaped
        rows = [ln for ln in out.splitlines() if ln.startswith("| ")]
        assert all(len(re.findall(r"(?<!\\)\|", r)) == 3 for r in rows), rows


def test_md_text_is_html_escaped_and_brackets_escaped() -> None:
    assert md_text("<b>&</b>") == "&lt;b&gt;&amp;&lt;/b&gt;"
    assert md_text("![a](b)") == "!\\[a\\](b)"
    assert md_text("\\[a]") == "\\\\\\[a\\]"
    assert md_text("a|b") == "a\\|b"
