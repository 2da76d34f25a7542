"""Markdown rendered to plain text through markdown-it-py (CommonMark, plus tables and
strikethrough), with headings and a source map (:mod:`ragcourt.corpus.markup_map`).

Links and emphasis become their text (a link's URL is dropped, an autolink shows its URL);
inline code its content; images and inline HTML tags are dropped; an HTML block keeps its
visible text (tags, scripts and styles dropped; parsed as HTML5 by selectolax, never
rendered); fenced and indented code keep their lines (the info string is dropped).
Headings (ATX and setext) start their own block; table rows become one line each, cells
joined by `` | ``; list items and block quotes are blocks of their own (no markers). A YAML
front matter block (``---`` ... ``---`` at the top) is skipped. Link reference definitions
are consumed by the parser and leave no text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from markdown_it import MarkdownIt
from markdown_it.token import Token
from selectolax.lexbor import LexborHTMLParser

from ragcourt.corpus.markup_map import Rendered, TextBuilder, source_text

_FRONT_MATTER = re.compile(r"\A---[ \t]*\n.*?\n(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.DOTALL)
_HTML_HIDDEN = ("script", "style", "template", "noscript", "head")
_SKIPPED_INLINE = frozenset({"html_inline", "image"})
_BLOCKS = ("bullet_list_", "ordered_list_", "list_item_", "blockquote_", "table_")


def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])


def _blank_front_matter(source: str) -> str:
    """``source`` with a leading YAML front matter block blanked (same length and lines)."""
    m = _FRONT_MATTER.match(source)
    if m is None:
        return source
    return re.sub(r"[^\n]", " ", m.group()) + source[m.end() :]


class _Walker:
    """Renders markdown-it's token stream into a :class:`TextBuilder` (module docstring)."""

    def __init__(self, builder: TextBuilder) -> None:
        self.b = builder
        self.cell = 0  # cells seen in the current table row

    def hint(self, tok: Token) -> tuple[int, int]:
        if tok.map is None:
            return (0, len(self.b.source))
        first, end = tok.map
        return self.b.line_span(first, max(first, end - 1))

    def inline(self, tok: Token) -> None:
        """A block's inline tokens (an image's children, its alt text, are not walked)."""
        hint = self.hint(tok)
        for child in tok.children or ():
            kind = child.type
            if kind in ("softbreak", "hardbreak"):
                self.b.prose(" ", None)
            elif kind in _SKIPPED_INLINE or kind.endswith(("_open", "_close")):
                continue
            elif child.content:  # text, code_inline, anything else with text
                self.b.prose(child.content, hint)

    def html_block(self, tok: Token) -> None:
        tree = LexborHTMLParser(tok.content)
        tree.strip_tags(list(_HTML_HIDDEN))
        body = tree.body
        text = body.text(separator=" ") if body is not None else ""
        self.b.block()
        self.b.prose(text, self.hint(tok))
        self.b.block()

    def token(self, tok: Token) -> None:
        kind = tok.type
        if kind == "heading_open":
            self.b.heading(int(tok.tag[1:]))
        elif kind == "heading_close":
            self.b.end_heading()
        elif kind in ("paragraph_open", "paragraph_close", "tr_open", "tr_close", "hr"):
            self.b.block()
            self.cell = 0
        elif kind in ("th_open", "td_open"):
            if self.cell:
                self.b.prose(" | ", None)
            self.cell += 1
        elif kind == "inline":
            self.inline(tok)
        elif kind in ("fence", "code_block"):
            self.b.code(tok.content, self.hint(tok))
        elif kind == "html_block":
            self.html_block(tok)
        elif kind.startswith(_BLOCKS):
            self.b.block()

    def walk(self, tokens: Sequence[Token]) -> None:
        for tok in tokens:
            self.token(tok)


def render_markdown(raw: str) -> Rendered:
    """Text, headings and source map of Markdown ``raw`` (module docstring); the map refers
    to :func:`~ragcourt.corpus.markup_map.source_text` of ``raw``."""
    source = source_text(raw)
    tokens = _parser().parse(_blank_front_matter(source))
    builder = TextBuilder(source)
    _Walker(builder).walk(tokens)
    return builder.rendered()
