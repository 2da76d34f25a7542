"""Format readers of the ingest stage: one file's bytes -> its normalised text and title, within
the file's :class:`Budget` (rules in :mod:`ragcourt.corpus.ingest`).

Every reader is linear in its input or bounded by the budget: HTML nested deeper than
``html_max_depth`` is refused by a linear scan before the HTML5 parser sees it (the parser's
scope checks make deep block nesting quadratic); a PDF's page tree is walked with a page count
and loop check before pypdf flattens it, a page whose content streams an earlier page already
drew adds no text again, the decoded content streams count against ``max_bytes`` and the text
against ``max_chars`` while it is extracted. A file past its budget raises :class:`Rejected`
naming the params key.
"""

from __future__ import annotations

import io
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from selectolax.lexbor import LexborHTMLParser, LexborNode

from ragcourt.corpus.markup_map import COPIED, Heading, Rendered, Segment, source_text

MAX_TITLE_CHARS = 120


class Rejected(Exception):
    """A file that cannot become a document; the message is the table's ``reason``."""


@dataclass(frozen=True)
class Parsed:
    """A file's normalised text and title; for rendered markup (reST, Markdown) its headings,
    and a source map wherever the text's characters can be traced to the file
    (:mod:`ragcourt.corpus.markup_map`; None for HTML and PDF)."""

    text: str
    title: str | None
    headings: tuple[Heading, ...] | None = None
    segments: tuple[Segment, ...] | None = None


@dataclass(frozen=True)
class Budget:
    """What one file may cost (the ``corpus`` params of the same names)."""

    max_bytes: int = 50_000_000
    max_chars: int = 10_000_000
    max_pages: int = 5_000
    html_max_depth: int = 512


def too_much_text(budget: Budget) -> Rejected:
    return Rejected(f"too much text: over corpus.max_file_chars ({budget.max_chars:,} characters)")


def exception_line(err: BaseException) -> str:
    """``"<ExceptionType>: <message>"`` on one line (whitespace runs collapsed, 300 chars max)."""
    msg = " ".join(str(err).split())
    return f"{type(err).__name__}: {msg}"[:300] if msg else type(err).__name__


def normalise(text: str) -> str:
    """NFC, LF line endings, surrounding whitespace stripped: the text offsets refer to."""
    text = unicodedata.normalize("NFC", text)
    return text.replace("\r\n", "\n").replace("\r", "\n").strip()


def decode_text(data: bytes) -> str:
    """UTF-8 (BOM dropped); Rejected for binary or invalid bytes."""
    if b"\x00" in data[:8192]:
        raise Rejected("binary: NUL byte in the first 8 KiB")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise Rejected(
            f"undecodable: not valid UTF-8 (byte 0x{data[err.start]:02x} at offset {err.start})"
        ) from None


# ---------------------------------------------------------------------------------------------
# HTML

HTML_SKIP = frozenset({"script", "style", "template", "noscript", "head"})
HTML_BLOCK = frozenset(
    {"p", "div", "br", "li", "ul", "ol", "dl", "dd", "dt", "tr", "table", "caption", "section",
     "article", "main", "nav", "aside", "header", "footer", "address", "blockquote", "pre",
     "figure", "figcaption", "details", "summary", "form", "fieldset", "h1", "h2", "h3", "h4",
     "h5", "h6"}
)  # fmt: skip
HTML_BREAK = frozenset({"br", "hr"})
HTML_CELL = frozenset({"td", "th"})  # table cells: separated by a space within their row

# Elements that never nest: void elements, and those whose end tag HTML5 implies when a
# sibling starts (an unclosed <p> or <li> run is siblings, not depth)
_HTML_FLAT = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
     "track", "wbr", "param", "keygen", "frame", "basefont", "bgsound", "image", "p", "li",
     "dt", "dd", "tr", "td", "th", "option", "optgroup", "rb", "rt", "rtc", "rp", "thead",
     "tbody", "tfoot", "colgroup", "caption", "html", "head", "body"}
)  # fmt: skip
# Elements whose content is text up to their end tag (a "<div>" inside a script is no element)
_HTML_RAW = frozenset(
    {"script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes", "noscript"}
)
_FOREIGN = frozenset({"svg", "math"})  # a self-closing element there has no content
_TAG = re.compile(r"<(/?)([A-Za-z][^\s/<>]*)([^<>]*)>")


def html_depth_exceeds(raw: str, limit: int) -> bool:
    """True when ``raw`` nests elements deeper than ``limit`` (a linear scan of start and end
    tags: comments, raw-text elements and flat elements skipped; an approximation of the HTML5
    tree that never undercounts nesting by block elements)."""
    depth = foreign = 0
    pos, n = 0, len(raw)
    while pos < n:
        lt = raw.find("<", pos)
        if lt < 0:
            return False
        if raw.startswith("<!--", lt):
            end = raw.find("-->", lt + 4)
            if end < 0:
                return False  # an unclosed comment runs to the end of the file
            pos = end + 3
            continue
        m = _TAG.match(raw, lt)
        if m is None:
            pos = lt + 1
            continue
        pos = m.end()
        closing, name = m.group(1) == "/", m.group(2).lower()
        if name in _HTML_FLAT:
            continue
        if closing:
            depth = max(depth - 1, 0)
            if name in _FOREIGN:
                foreign = max(foreign - 1, 0)
            continue
        if foreign and m.group(3).rstrip().endswith("/"):
            continue  # <path/> in SVG: no content (in HTML, <div/> still opens a div)
        if name in _HTML_RAW:
            end = _find_end(raw, name, pos)
            if end < 0:
                return False
            pos = end
            continue
        if name in _FOREIGN:
            foreign += 1
        depth += 1
        if depth > limit:
            return True
    return False


def _find_end(raw: str, name: str, start: int) -> int:
    """Index of the end tag ``</name`` (any case) at or after ``start``; -1 if there is none."""
    m = re.compile(f"</{re.escape(name)}", re.IGNORECASE).search(raw, start)
    return m.start() if m is not None else -1


def _html_text(root: LexborNode) -> str:
    """Text under ``root`` in document order: HTML_SKIP subtrees dropped, a line break around
    each HTML_BLOCK element, one for <br>/<hr>, a space after each cell (iterative: deep
    nesting is fine)."""
    parts: list[str] = []
    stack: list[LexborNode | str] = [root]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            parts.append(item)
            continue
        tag = item.tag or ""
        if tag == "-text":
            parts.append(item.text_content or "")
            continue
        if tag in HTML_SKIP or tag.startswith(("-", "_", "!")):  # comments, doctype
            continue
        if tag in HTML_BREAK:  # void elements: one line break, no content
            parts.append("\n")
            continue
        after = "\n" if tag in HTML_BLOCK else " " if tag in HTML_CELL else ""
        if after:
            stack.append(after)
        stack.extend(reversed(list(item.iter(include_text=True))))
        if tag in HTML_BLOCK:
            parts.append("\n")
    return "".join(parts)


def parse_html(raw: str, budget: Budget | None = None) -> Parsed:
    """Visible text and title of an HTML page, parsed as HTML5 (Lexbor, via selectolax): the
    HTML5 tree builder closes an unclosed <head> and opens <body> as browsers do, decodes
    entities, and keeps only <body> text (HTML_SKIP subtrees dropped, blocks end lines).
    Nesting deeper than ``budget.html_max_depth`` is Rejected before parsing."""
    budget = budget or Budget()
    if html_depth_exceeds(raw, budget.html_max_depth):
        raise Rejected(
            "too deeply nested: HTML elements nested deeper than corpus.html_max_depth "
            f"({budget.html_max_depth})"
        )
    tree = LexborHTMLParser(raw)
    body = tree.body
    text = _html_text(body) if body is not None else ""
    lines = (re.sub(r"[ \t\f\v]+", " ", ln).strip() for ln in text.split("\n"))
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(lines))
    title_node, h1_node = tree.css_first("title"), tree.css_first("body h1")
    title = " ".join(title_node.text().split()) if title_node is not None else ""
    h1 = " ".join(h1_node.text().split()) if h1_node is not None else ""
    return Parsed(text, title or h1 or None)


# ---------------------------------------------------------------------------------------------
# PDF


def _ref_key(obj: Any) -> tuple[int, int] | None:
    """(object number, generation) of an indirect reference; None for a direct object."""
    idnum = getattr(obj, "idnum", None)
    return (int(idnum), int(obj.generation)) if idnum is not None else None


PAGE_TREE_MAX_DEPTH = 100


def count_pages(reader: Any, budget: Budget) -> int:
    """Leaves of ``reader``'s page tree, counted without expanding it: more than
    ``budget.max_pages``, a tree deeper than PAGE_TREE_MAX_DEPTH or a node that is its own
    ancestor is Rejected before pypdf flattens the tree (a node repeated in ``/Kids`` makes
    many pages of a few bytes)."""
    from pypdf.generic import ArrayObject, DictionaryObject

    too_many = Rejected(
        f"too many pages: more than corpus.max_pdf_pages ({budget.max_pages:,}) pages"
    )
    top = reader.trailer["/Root"].get_object().get("/Pages")
    top = top.get_object() if top is not None else None
    if not isinstance(top, DictionaryObject):
        raise Rejected("unparsable pdf: no page tree")
    leaves = visited = 0
    stack: list[tuple[Any, tuple[tuple[int, int], ...]]] = [(top, ())]  # (node, ancestor refs)
    while stack:
        node, ancestors = stack.pop()
        visited += 1
        if visited > 2 * budget.max_pages + 1_000:
            raise too_many
        kids = node.get("/Kids") if node.get("/Type") != "/Page" else None
        if kids is None:
            leaves += 1
            if leaves > budget.max_pages:
                raise too_many
            continue
        if len(ancestors) >= PAGE_TREE_MAX_DEPTH:
            raise Rejected(f"unparsable pdf: page tree deeper than {PAGE_TREE_MAX_DEPTH} levels")
        kids = kids.get_object()
        if not isinstance(kids, ArrayObject):
            raise Rejected("unparsable pdf: a page tree node's /Kids is not an array")
        for kid_ref in kids:
            key = _ref_key(kid_ref)
            if key is not None and key in ancestors:
                raise Rejected("unparsable pdf: the page tree loops")
            kid = kid_ref.get_object()
            if isinstance(kid, DictionaryObject):
                stack.append((kid, (*ancestors, key) if key is not None else ancestors))
    return leaves


def _content_refs(page: Any) -> tuple[Any, ...]:
    """The page's content streams as a tuple of references (a direct stream: itself)."""
    from pypdf.generic import ArrayObject

    raw = page.raw_get("/Contents") if "/Contents" in page else None
    if raw is None:
        return ()
    items = raw.get_object() if _ref_key(raw) is not None else raw
    if isinstance(items, ArrayObject):
        return tuple(items)
    return (raw,)


class _TextBudget:
    """Counts extracted characters against the budget while pypdf emits them."""

    def __init__(self, budget: Budget) -> None:
        self.budget = budget
        self.chars = 0

    def __call__(self, text: Any, *_args: Any) -> None:
        self.chars += len(text)
        if self.chars > self.budget.max_chars:
            raise too_much_text(self.budget)


def parse_pdf(data: bytes, budget: Budget | None = None) -> Parsed:
    """Text (pages joined by a blank line) and metadata title of a PDF within ``budget``
    (module docstring); an unreadable or encrypted PDF is Rejected as "unparsable pdf"."""
    from pypdf import PdfReader

    budget = budget or Budget()
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise Rejected("unparsable pdf: encrypted")
        count_pages(reader, budget)
        counter = _TextBudget(budget)
        decoded: dict[Any, int] = {}  # content stream -> its decoded size in bytes
        decoded_total = 0
        seen: set[tuple[Any, ...]] = set()
        pages: list[str] = []
        for page in reader.pages:
            refs = _content_refs(page)
            keys = tuple(_ref_key(r) or id(r) for r in refs)
            if keys in seen:
                continue  # the content streams an earlier page drew: its text is there already
            seen.add(keys)
            for ref, key in zip(refs, keys, strict=True):
                if key not in decoded:
                    stream = ref.get_object()
                    decoded[key] = len(stream.get_data()) if hasattr(stream, "get_data") else 0
                decoded_total += decoded[key]
                if decoded_total > budget.max_bytes:
                    raise Rejected(
                        "too large: page contents decode to over corpus.max_file_bytes "
                        f"({budget.max_bytes:,} bytes)"
                    )
            pages.append(page.extract_text(visitor_text=counter) or "")
        meta_title = reader.metadata.title if reader.metadata else None
    except Rejected:
        raise
    except MemoryError:
        raise Rejected("too large: parsing needed over corpus.parse_memory_mb") from None
    except Exception as err:  # any parser failure on one file is a rejected row
        # pypdf raises PyPdfError/ValueError/KeyError on ordinary damage, but malformed files also
        # surface as IndexError, AttributeError, zlib.error, RecursionError, AssertionError, ...
        raise Rejected(f"unparsable pdf: {exception_line(err)}") from None
    text = "\n\n".join(pages)
    if len(text) > budget.max_chars:
        raise too_much_text(budget)
    return Parsed(text, str(meta_title or "").strip() or None)


# ---------------------------------------------------------------------------------------------
# Rendered markup and plain text: text with a source map


def plain_text(raw: str) -> Parsed:
    """Plain text: the normalised text, one copied segment (it is the source, stripped)."""
    source = source_text(raw)
    text = source.strip()
    lead = len(source) - len(source.lstrip())
    return Parsed(text, None, None, (Segment(0, len(text), lead, lead + len(text), COPIED),))


def _shifted(rendered: Rendered) -> Parsed:
    """``rendered`` as a Parsed whose text is normalised (:func:`normalise`): a leading
    whitespace strip shifts headings and map; text that NFC would change keeps no map."""
    text = rendered.text
    if normalise(text) != text.strip():
        return Parsed(normalise(text), rendered.title)
    lead = len(text) - len(text.lstrip())
    text = text.strip()
    n = len(text)
    segs: list[Segment] = []
    for s in rendered.segments:
        a, b = s.text_start - lead, s.text_end - lead
        if b <= 0 or a >= n:
            continue
        ca, cb = max(a, 0), min(b, n)
        ss, se = s.source_start, s.source_end
        if s.kind == COPIED:  # cut the same characters off the source side
            ss, se = ss + (ca - a), se - (b - cb)
        segs.append(Segment(ca, cb, ss, se, s.kind))
    heads = tuple(Heading(h.start - lead, h.level, h.title) for h in rendered.headings)
    return Parsed(text, rendered.title, heads, tuple(segs))


def render_markup(raw: str, fmt: str) -> Parsed:
    """reST or Markdown rendered to text (:mod:`ragcourt.corpus.markup_rst`,
    :mod:`ragcourt.corpus.markup_md`): title = the first heading."""
    if fmt == "rst":
        from ragcourt.corpus.markup_rst import render_rst

        return _shifted(render_rst(raw))
    from ragcourt.corpus.markup_md import render_markdown

    return _shifted(render_markdown(raw))


# ---------------------------------------------------------------------------------------------
# Any format


def parse_bytes(data: bytes, fmt: str, budget: Budget) -> Parsed:
    """Normalised text and format-specific title of one file's bytes, within ``budget``;
    reST and Markdown rendered, with headings and a source map (plain text: a map too)."""
    if not data.strip():
        raise Rejected("empty: file has no content")
    if fmt == "pdf":
        parsed = parse_pdf(data, budget)
    else:
        raw = decode_text(data)
        if len(raw) > budget.max_chars and fmt != "html":
            raise too_much_text(budget)
        if fmt == "html":
            parsed = parse_html(raw, budget)
        elif fmt in ("markdown", "rst"):
            parsed = render_markup(raw, fmt)
        else:
            parsed = plain_text(raw)
    text = normalise(parsed.text)
    if len(text) > budget.max_chars:
        raise too_much_text(budget)
    if text != parsed.text:
        return Parsed(text, parsed.title)
    return parsed
