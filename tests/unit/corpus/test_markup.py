"""Markup rendered to text: reST through docutils, Markdown through markdown-it-py; headings
become section paths; every chunk maps back to its source file (the round trip of
ragcourt.corpus.markup_map.roundtrip_misses)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragcourt.core.schemas import check
from ragcourt.corpus.chunking import chunk_documents
from ragcourt.corpus.formats import Budget, parse_bytes
from ragcourt.corpus.ingest import ingest
from ragcourt.corpus.markup_map import (
    COPIED,
    GENERATED,
    Sections,
    SourceMap,
    headings_of,
    roundtrip_misses,
    segments_of,
    source_text,
)
from ragcourt.corpus.markup_rst import render_rst, role_text
from ragcourt.corpus.params import ChunkSpec, CorpusParams

DATA = Path(__file__).resolve().parents[2] / "data" / "markup"
ROLE = re.compile(r":[a-z]+:")  # role syntax, as the acceptance check states it
DIRECTIVE = re.compile(r"(?:^|\s)\.\. ")  # a directive or comment marker
MD_SYNTAX = re.compile(r"\]\(|\[[^\]]*\]\[|!\[|\*\*|__|(?<![\w*])\*\w|\w\*(?![\w*])|~~|<https?:")


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The fixtures and a plain text file ingested and chunked small (64 tokens, overlap 8)."""
    root = tmp_path_factory.mktemp("corpus")
    for name in ("library.rst", "guide.md"):
        shutil.copy(DATA / name, root / name)
    (root / "speech.txt").write_text("  Fellow citizens,\r\n\r\nwe meet today.\n", "utf-8")
    docs, rejected = ingest(CorpusParams(dir=str(root)))
    assert rejected.is_empty()
    chunks = chunk_documents(docs, "c64", ChunkSpec(size=64, overlap=8), "cl100k_base")
    check(docs, "documents", "docs")
    check(chunks, "chunks", "chunks")
    return docs, chunks


def _doc(docs: pl.DataFrame, name: str) -> dict[str, object]:
    return docs.filter(pl.col("path").str.ends_with(name)).row(0, named=True)


def _chunks(docs: pl.DataFrame, chunks: pl.DataFrame, name: str) -> pl.DataFrame:
    return chunks.filter(pl.col("doc_id") == _doc(docs, name)["doc_id"])


def test_rst_chunks_hold_no_role_syntax_and_no_directive_marker(
    tables: tuple[pl.DataFrame, pl.DataFrame],
) -> None:
    docs, chunks = tables
    texts = _chunks(docs, chunks, "library.rst")["text"].to_list()
    assert len(texts) > 5
    for text in texts:
        assert not ROLE.search(text), text
        assert not DIRECTIVE.search(text), text
        assert "``" not in text and "|project|" not in text


def test_rst_roles_directives_and_code_render_as_text() -> None:
    text = parse_bytes((DATA / "library.rst").read_bytes(), "rst", Budget()).text
    assert "Each handler formats its records with setFormatter, see the formatter guide" in text
    assert "and PEP 282." in text
    assert "Changed in version 3.2: The NullHandler class was added to the package." in text
    assert "Added in version 3.7: The setStream method was added." in text
    assert "Deprecated since version 3.12: Use logging.basicConfig instead." in text
    assert "Deprecated since version 3.4, will be removed in version 3.6: The old warn" in text
    assert "Note: A handler never closes a stream it did not open; see the logging cookbook" in text
    assert "Warning: Rotating a file" in text and "See also: howto/logging-cookbook" in text
    assert "Ctrl-C in Cancel and Start ‣ Programs, print(value), PYTHONPATH." in text
    # code keeps its lines; a signature is a line of its own
    assert "import logging\nhandler = logging.StreamHandler()\nlogging.getLogger()" in text
    assert ">>> handler.terminator\n'\\n'" in text
    assert 'handler = RotatingFileHandler("app.log", maxBytes=2000, backupCount=5)' in text
    assert "\n\nemit(record)\n\n" in text
    assert "FileHandler | a file on disk" in text
    # an unknown directive keeps its arguments and content, not its options
    assert "an unknown directive\n\nIts content is still text, with a target name role." in text
    for gone in ("This comment", "sectionauthor", "Vinay", "maxdepth", "digraph", "synopsis",
                 "strange-option", "emphasize-lines", "Attaching a handler"):  # fmt: skip
        assert gone not in text, gone


def test_include_raw_and_file_options_never_read_a_file_or_pass_html() -> None:
    text = parse_bytes((DATA / "library.rst").read_bytes(), "rst", Budget()).text
    if Path("/etc/passwd").is_file():
        first = Path("/etc/passwd").read_text(errors="replace").split(":", 1)[0]
        assert f"{first}:" not in text
    assert "<script>" not in text and "alert" not in text and "Secrets" not in text


@pytest.mark.parametrize(
    ("role", "shown"),
    [
        ("~Handler.setFormatter", "setFormatter"),
        ("Handler.setFormatter", "Handler.setFormatter"),
        ("!json", "json"),
        ("the guide <formatter-objects>", "the guide"),
        (".Logger.info", "Logger.info"),
        ("~.Logger.info", "info"),
    ],
)
def test_role_text_follows_sphinx(role: str, shown: str) -> None:
    assert role_text("meth", role) == shown


def test_markdown_chunks_hold_no_link_or_emphasis_syntax_and_keep_code(
    tables: tuple[pl.DataFrame, pl.DataFrame],
) -> None:
    docs, chunks = tables
    code = "[x for x in p.iterdir() if x.is_dir()]  # **not** emphasis"
    texts = _chunks(docs, chunks, "guide.md")["text"].to_list()
    for text in texts:
        prose = text.replace(code, "")
        assert not MD_SYNTAX.search(prose), prose
        assert "Front matter" not in text and "alert" not in text and "<span>" not in text
    whole = str(_doc(docs, "guide.md")["text"])
    assert 'from pathlib import Path\np = Path(".")\n' + code in whole
    assert "indented code is code too" in whole
    assert "exists() | true if the path exists" in whole
    assert "see the reference and https://example.org. An image is dropped;" in whole
    assert "A quote with a link & an entity." in whole


def test_titles_are_first_headings_and_chunks_record_their_section(
    tables: tuple[pl.DataFrame, pl.DataFrame],
) -> None:
    docs, chunks = tables
    rst, md, txt = (_doc(docs, n) for n in ("library.rst", "guide.md", "speech.txt"))
    assert rst["title"] == "logging.handlers --- Logging handlers"
    assert md["title"] == "Getting started with pathlib"
    assert txt["title"] == "Fellow citizens,"  # plain text: first short line, as before
    sections = set(_chunks(docs, chunks, "library.rst")["section"].to_list())
    top = "logging.handlers --- Logging handlers"
    assert {top, f"{top} › StreamHandler", f"{top} › StreamHandler › Rotating files"} <= sections
    sections_md = Sections.of(headings_of(md["headings"]))  # type: ignore[arg-type]
    title, text = "Getting started with pathlib", str(md["text"])
    assert sections_md.at(text.index("Last paragraph")) == (
        f"{title} › Setext section › Deeper heading"
    )
    assert sections_md.at(text.index("Listing")) == f"{title} › Basic use"
    assert sections_md.at(0) == title
    assert _chunks(docs, chunks, "speech.txt")["section"].to_list() == [None]


def test_a_markup_file_without_heading_is_titled_by_its_stem(tmp_path: Path) -> None:
    (tmp_path / "no_heading.rst").write_text("Just a paragraph with :func:`len`.\n", "utf-8")
    (tmp_path / "notes.md").write_text("Short first line\n\nMore *text*.\n", "utf-8")
    docs, _ = ingest(CorpusParams(dir=str(tmp_path)))
    assert sorted(docs["title"].to_list()) == ["no_heading", "notes"]
    assert "Just a paragraph with len." in docs["text"].to_list()


def test_every_chunk_round_trips_to_its_source_file(
    tables: tuple[pl.DataFrame, pl.DataFrame],
) -> None:
    """For every chunk: its source span lies in the file, its copied characters are the
    file's, and each of its words that the renderer did not write occurs in the file's slice
    (roundtrip_misses); the stored source offsets are that span."""
    docs, chunks = tables
    for doc in docs.iter_rows(named=True):
        source = source_text(Path(doc["path"]).read_text(encoding="utf-8-sig"))
        segments = segments_of(doc["source_map"])
        assert segments is not None
        smap = SourceMap.of(segments)
        for c in chunks.filter(pl.col("doc_id") == doc["doc_id"]).iter_rows(named=True):
            assert roundtrip_misses(doc["text"], source, smap, c["char_start"], c["char_end"]) == []
            assert (c["source_start"], c["source_end"]) == smap.span(c["char_start"], c["char_end"])


def test_plain_text_maps_to_itself_and_its_chunk_columns_are_unchanged(
    tables: tuple[pl.DataFrame, pl.DataFrame],
) -> None:
    docs, chunks = tables
    doc = _doc(docs, "speech.txt")
    assert doc["text"] == "Fellow citizens,\n\nwe meet today."
    assert doc["headings"] is None
    assert doc["source_map"] == [
        {"text_start": 0, "text_end": 32, "source_start": 2, "source_end": 34, "kind": COPIED}
    ]
    row = _chunks(docs, chunks, "speech.txt").row(0, named=True)
    assert (row["char_start"], row["char_end"], row["source_start"]) == (0, 32, 2)


def test_generated_text_maps_to_its_directive() -> None:
    raw = (DATA / "library.rst").read_text(encoding="utf-8")
    rendered = render_rst(raw)
    source = source_text(raw)
    shown = {
        rendered.text[s.text_start : s.text_end]: source[s.source_start : s.source_end].strip()
        for s in rendered.segments
        if s.kind == GENERATED
    }
    assert shown["Changed in version 3.2:"] == ".. versionchanged:: 3.2"
    assert shown["Note:"] == ".. note::"
    copied = [s for s in rendered.segments if s.kind == COPIED]
    assert all(
        rendered.text[s.text_start : s.text_end] == source[s.source_start : s.source_end]
        for s in copied
    )


MARKUP = st.sampled_from(
    [":meth:`~a.b`", ":unknown:`x <y>`", "`x`_", "*", "**", "``", "|sub|", "[#]_", "\n\n",
     ".. note::\n   n\n", ".. weird:: arg\n   :opt: 1\n\n   body\n", "::\n\n    code\n\n",
     "Title\n=====\n", "- item\n", "  ", ".. |sub| replace:: s\n", ".. include:: x\n", "\\"]
)  # fmt: skip
WORD = st.text(alphabet=st.characters(codec="utf-8", categories=("L", "N")), min_size=1, max_size=8)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(parts=st.lists(st.one_of(MARKUP, WORD, st.just(" ")), min_size=1, max_size=40))
def test_any_rst_renders_and_its_copied_segments_are_the_source(parts: list[str]) -> None:
    """Malformed or unknown markup never raises, and the map's invariants hold."""
    raw = "".join(parts)
    rendered = render_rst(raw)
    source = source_text(raw)
    last = 0
    for s in rendered.segments:
        assert last <= s.text_start < s.text_end <= len(rendered.text)
        last = s.text_end
        assert 0 <= s.source_start <= s.source_end <= len(source)
        if s.kind == COPIED:
            assert rendered.text[s.text_start : s.text_end] == source[s.source_start : s.source_end]


def test_text_stripped_at_its_start_keeps_its_map_exact() -> None:
    raw = "```\n    indented = 1\n```\n\nAfter the code.\n"
    parsed = parse_bytes(raw.encode(), "markdown", Budget())
    assert parsed.text == "indented = 1\n\nAfter the code."
    source = source_text(raw)
    smap = SourceMap.of(parsed.segments or ())
    assert smap.span(0, 8) == (source.index("indented"), source.index("indented") + 8)
    assert roundtrip_misses(parsed.text, source, smap, 0, len(parsed.text)) == []
