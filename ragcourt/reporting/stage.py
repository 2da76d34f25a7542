"""Report stage: one self-contained HTML page (plots inlined as base64 PNG) and a Markdown twin.

Reads whatever pipeline artifacts exist under the cwd (leaderboard and tournament summary,
DAFE summary and verdicts, retrieval summary, metric correlations, QA summary, the gateway's
call metrics, pairwise judgements) and writes ``data/report/report.html`` and
``data/report/report.md``, the headline figures as ``data/report/headline.json``
(:class:`~ragcourt.reporting.headline.Headline`, a DVC metric) and every named figure (the
headline's leaderboard and Elo-gap plots, cost per stage) as ``data/report/figures/<name>.png``.
A missing or malformed artifact never fails the stage: its section shows a note naming the
file and the stage that makes it.

Text from documents, questions and answers is data in both: the HTML template autoescapes,
and every value the Markdown templates print goes through
:func:`~ragcourt.reporting.model.md_text` (no raw HTML, no link or image, no stray table pipe).
"""

from __future__ import annotations

import base64
import logging
from datetime import UTC, datetime
from pathlib import Path

import jinja2

from ragcourt.core import catalog
from ragcourt.core.io import write_json, write_text, write_with
from ragcourt.reporting.artifacts import Artifacts
from ragcourt.reporting.headline import Headline, headline
from ragcourt.reporting.model import MarkdownBlock, Section, md_text
from ragcourt.reporting.params import ReportingView
from ragcourt.reporting.sections import build_sections

log = logging.getLogger("ragcourt.report")

HTML_PATH = catalog.path("report_html")
MD_PATH = catalog.path("report_md")
HEADLINE_PATH = catalog.path("report_headline")
FIGURES_DIR = catalog.path("report_figures")
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
        "figures_rel": FIGURES_DIR.relative_to(HTML_PATH.parent).as_posix(),
    }
    html = _env(autoescape=True).get_template("report.html.j2").render(**ctx)
    md = _env(autoescape=False).get_template("report.md.j2").render(**ctx)
    return html, md


def section_markdown(section: Section) -> str:
    """One section as Markdown (what the Prefect artifacts show)."""
    return _env(autoescape=False).get_template("section.md.j2").render(s=section).strip() + "\n"


def build_all(
    params: ReportingView, root: Path = Path(".")
) -> tuple[str, str, list[Section], Headline]:
    """The report texts, its sections and the headline figures of the artifacts under ``root``."""
    art = Artifacts(root=root, metrics_dir=params.llm.metrics_dir)
    head = headline(art)
    sections = build_sections(art, params, head)
    html, md = render(sections, root.resolve())
    return html, md, sections, head


def build(params: ReportingView, root: Path = Path(".")) -> tuple[str, str, list[Section]]:
    """The (HTML, Markdown) texts and the sections of the artifacts under ``root``."""
    html, md, sections, _ = build_all(params, root)
    return html, md, sections


def write_figures(sections: list[Section], folder: Path) -> list[Path]:
    """Every named figure as ``<folder>/<name>.png`` (the folder's old PNGs removed first)."""
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.png"):
        old.unlink()
    out = []
    for fig in (f for s in sections for f in s.figures if f.name):
        png = base64.b64decode(fig.png_base64)

        def put(tmp: Path, png: bytes = png) -> None:
            tmp.write_bytes(png)

        out.append(write_with(folder / f"{fig.name}.png", put))
    return out


def run(params: ReportingView) -> tuple[Path, Path]:
    """Write report.html, report.md, headline.json and the named figures from the artifacts
    under the cwd."""
    html, md, sections, head = build_all(params)
    write_text(html, HTML_PATH)
    write_text(md, MD_PATH)
    write_json(head.model_dump(mode="json"), HEADLINE_PATH)
    write_figures(sections, FIGURES_DIR)
    incomplete = [s.title for s in sections if s.notes and s.empty]
    if incomplete:
        log.warning("report: sections without data: %s", "; ".join(incomplete))
    log.info("report: wrote %s and %s", HTML_PATH, MD_PATH)
    return HTML_PATH, MD_PATH
