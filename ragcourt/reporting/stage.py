"""Report stage: one self-contained HTML page (plots inlined as base64 PNG) and a Markdown twin.

Reads whatever pipeline artifacts exist under the cwd (leaderboard and tournament summary,
DAFE summary and verdicts, retrieval summary, metric correlations, QA summary, the gateway's
call metrics, pairwise judgements) and writes ``data/report/report.html`` and
``data/report/report.md``. A missing or malformed artifact never fails the stage: its section
shows a note naming the file and the stage that makes it.

Text from documents, questions and answers is data in both: the HTML template autoescapes,
and every value the Markdown templates print goes through
:func:`~ragcourt.reporting.model.md_text` (no raw HTML, no link or image, no stray table pipe).
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from pathlib import Path

import jinja2

from ragcourt.core import catalog
from ragcourt.core.io import write_text
from ragcourt.core.params import Params
from ragcourt.reporting.artifacts import Artifacts
from ragcourt.reporting.model import MarkdownBlock, Section, md_text
from ragcourt.reporting.sections import build_sections

log = logging.getLogger("ragcourt.report")

HTML_PATH = catalog.path("report_html")
MD_PATH = catalog.path("report_md")
TITLE = "ragcourt report"


def _md_finalize(value: object) -> object:
    """Every value a Markdown template prints is data: :func:`md_text`, except a
    :class:`MarkdownBlock` (a table built from escaped cells)."""
    return value if isinstance(value, MarkdownBlock) else md_text(value)


def _env(autoescape: bool) -> jinja2.Environment:
    """HTML: jinja autoescape; Markdown: every printed value through :func:`_md_finalize`."""
    return jinja2.Environment(
        loader=jinja2.PackageLoader("ragcourt.reporting", "templates"),
        autoescape=autoescape,
        finalize=None if autoescape else _md_finalize,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def render(sections: list[Section], root: Path, generated: str | None = None) -> tuple[str, str]:
    """The (HTML, Markdown) texts of ``sections``."""
    ctx = {
        "title": TITLE,
        "generated": generated or datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "workdir": str(root),
        "sections": sections,
        "missing_count": sum(1 for s in sections if s.notes and s.empty),
    }
    html = _env(autoescape=True).get_template("report.html.j2").render(**ctx)
    md = _env(autoescape=False).get_template("report.md.j2").render(**ctx)
    return html, md


def section_markdown(section: Section) -> str:
    """One section as Markdown (what the Prefect artifacts show)."""
    return _env(autoescape=False).get_template("section.md.j2").render(s=section).strip() + "\n"


def build(params: Params, root: Path = Path(".")) -> tuple[str, str, list[Section]]:
    art = Artifacts(root=root, metrics_dir=params.llm.metrics_dir)
    sections = build_sections(art, params)
    html, md = render(sections, root.resolve())
    return html, md, sections


def run(params: Params) -> tuple[Path, Path]:
    """Write report.html and report.md from the artifacts under the cwd."""
    html, md, sections = build(params)
    write_text(html, HTML_PATH)
    write_text(md, MD_PATH)
    incomplete = [s.title for s in sections if s.notes and s.empty]
    if incomplete:
        log.warning("report: sections without data: %s", "; ".join(incomplete))
    log.info("report: wrote %s and %s", HTML_PATH, MD_PATH)
    return HTML_PATH, MD_PATH
