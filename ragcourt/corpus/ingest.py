"""Ingest stage: a folder of .txt/.md/.rst/.html/.pdf files -> documents + rejected tables.

Rules a reviewer should know:

* Files are walked recursively in sorted relative-path order; hidden files and folders (name
  starting with ``.``) are skipped. A file with an extension not in ``corpus.extensions`` is a
  rejected row ("unsupported extension"), not a silent skip.
* Text files must be UTF-8 (a BOM is dropped). A NUL byte in the first 8 KiB -> "binary";
  invalid UTF-8 -> "undecodable" with the byte offset. HTML is parsed as HTML5 (selectolax's
  Lexbor: a missing ``</head>``/``</body>`` is closed as a browser would, entities decoded)
  and keeps the <body> text only (no script/style/template/noscript), block elements become
  line breaks, table cells are space-separated; a page with no body text -> "empty". PDF
  text comes from pypdf, pages joined by a blank line; an unreadable or encrypted PDF ->
  "unparsable pdf".
* Normalisation (the stored ``text``, the one every char offset refers to): Unicode NFC,
  CRLF/CR -> LF, surrounding whitespace stripped. Empty after that -> "empty".
* ``doc_id`` = first 16 hex digits of sha256(normalised text). An exact duplicate (same text
  as a file earlier in path order) stays in the documents table with ``duplicate_of`` = the
  first file's doc_id and its own id ``<doc_id>-dup<n>``; only the first copy is chunked, so a
  duplicated file cannot double its weight in retrieval or QA sampling.
* Title: HTML <title> or first <h1>; Markdown first ``#`` heading; reStructuredText first
  underlined line; PDF metadata title; otherwise the first line if it is short (<= 120 chars)
  and not the whole text, else the file name stem.
* Symlinks are never followed out of the corpus folder, and directory symlinks are never
  descended into: a link whose resolved target lies outside ``corpus.dir`` ("symlink outside
  the corpus folder"), a dangling or looping link ("dangling symlink"), a link to a directory
  ("symlink to a directory") or to anything but a regular file ("symlink to a non-regular
  file") is a rejected row. A link to a regular file inside the corpus folder is read like that
  file (if the target is in the corpus too, the later path is an exact duplicate, not chunked).
* Every rejected file is logged as a warning; zero usable documents is a RagcourtError.
* Language: every document gets ``language`` (ISO 639-1, ``und`` without letters) and
  ``language_confidence`` from :func:`ragcourt.corpus.language.detect_language` (seeded, so a
  re-run writes the same table); the stage logs the language mix.
"""

from __future__ import annotations

import hashlib
import io
import logging
import os
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import polars as pl
from selectolax.lexbor import LexborHTMLParser, LexborNode

from ragcourt.core import catalog
from ragcourt.core.errors import RagcourtError
from ragcourt.core.io import write_parquet
from ragcourt.core.params import CorpusParams, Params
from ragcourt.core.schemas import frame_schema
from ragcourt.corpus.language import detect_language

log = logging.getLogger("ragcourt.ingest")

DOCUMENTS_PATH = catalog.path("documents")
REJECTED_PATH = catalog.path("rejected_documents")

FORMATS = {
    ".txt": "text",
    ".text": "text",
    ".md": "markdown",
    ".markdown": "markdown",
    ".rst": "rst",
    ".html": "html",
    ".htm": "html",
    ".pdf": "pdf",
}
MAX_TITLE_CHARS = 120


class Rejected(Exception):
    """A file that cannot become a document; the message is the table's ``reason``."""


@dataclass(frozen=True)
class Parsed:
    text: str
    title: str | None


# ---------------------------------------------------------------------------------------------
# Format readers


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


HTML_SKIP = frozenset({"script", "style", "template", "noscript", "head"})
HTML_BLOCK = frozenset(
    {"p", "div", "br", "li", "ul", "ol", "dl", "dd", "dt", "tr", "table", "caption", "section",
     "article", "main", "nav", "aside", "header", "footer", "address", "blockquote", "pre",
     "figure", "figcaption", "details", "summary", "form", "fieldset", "h1", "h2", "h3", "h4",
     "h5", "h6"}
)  # fmt: skip
HTML_BREAK = frozenset({"br", "hr"})
HTML_CELL = frozenset({"td", "th"})  # table cells: separated by a space within their row


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


def parse_html(raw: str) -> Parsed:
    """Visible text and title of an HTML page, parsed as HTML5 (Lexbor, via selectolax): the
    HTML5 tree builder closes an unclosed <head> and opens <body> as browsers do, decodes
    entities, and keeps only <body> text (HTML_SKIP subtrees dropped, blocks end lines)."""
    tree = LexborHTMLParser(raw)
    body = tree.body
    text = _html_text(body) if body is not None else ""
    lines = (re.sub(r"[ \t\f\v]+", " ", ln).strip() for ln in text.split("\n"))
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(lines))
    title_node, h1_node = tree.css_first("title"), tree.css_first("body h1")
    title = " ".join(title_node.text().split()) if title_node is not None else ""
    h1 = " ".join(h1_node.text().split()) if h1_node is not None else ""
    return Parsed(text, title or h1 or None)


def markdown_title(text: str) -> str | None:
    m = re.search(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", text, flags=re.MULTILINE)
    return m.group(1).strip() if m else None


def rst_title(text: str) -> str | None:
    lines = text.split("\n")
    for i in range(len(lines) - 1):
        line, under = lines[i].strip(), lines[i + 1].strip()
        if line and len(under) >= len(line) and re.fullmatch(r"([=\-~^\"'`#*+:.])\1*", under):
            return line
    return None


def one_line(err: BaseException) -> str:
    """``"<ExceptionType>: <message>"`` on one line (whitespace runs collapsed, 300 chars max)."""
    msg = " ".join(str(err).split())
    return f"{type(err).__name__}: {msg}"[:300] if msg else type(err).__name__


def parse_pdf(data: bytes) -> Parsed:
    from pypdf import PdfReader

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise Rejected("unparsable pdf: encrypted")
        pages = [page.extract_text() or "" for page in reader.pages]
        meta_title = reader.metadata.title if reader.metadata else None
    except Rejected:
        raise
    except Exception as err:  # any parser failure on one file is a rejected row
        # pypdf raises PyPdfError/ValueError/KeyError on ordinary damage, but malformed files also
        # surface as IndexError, AttributeError, zlib.error, RecursionError, AssertionError, ...
        raise Rejected(f"unparsable pdf: {one_line(err)}") from None
    return Parsed("\n\n".join(pages), (meta_title or "").strip() or None)


def parse_file(path: Path, fmt: str) -> Parsed:
    """Raw text and format-specific title of one file (not yet normalised)."""
    data = path.read_bytes()
    if not data.strip():
        raise Rejected("empty: file has no content")
    if fmt == "pdf":
        return parse_pdf(data)
    raw = decode_text(data)
    if fmt == "html":
        return parse_html(raw)
    if fmt == "markdown":
        return Parsed(raw, markdown_title(normalise(raw)))
    if fmt == "rst":
        return Parsed(raw, rst_title(normalise(raw)))
    return Parsed(raw, None)


def pick_title(parsed_title: str | None, text: str, stem: str) -> str:
    if parsed_title:
        return parsed_title[:MAX_TITLE_CHARS]
    first = text.split("\n", 1)[0].strip()
    if first and len(first) <= MAX_TITLE_CHARS and first != text:
        return first
    return stem


def doc_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


# ---------------------------------------------------------------------------------------------
# The stage


def list_files(root: Path) -> list[Path]:
    """Regular files and symlinks (to anything) under ``root`` in sorted relative-path order;
    hidden files/folders skipped; directory symlinks are listed, never descended into."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        here = Path(dirpath)
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in [*filenames, *dirnames]:
            p = here / name
            if name.startswith(".") or not (p.is_symlink() or p.is_file()):
                continue
            out.append(p)
    return sorted(out, key=lambda q: q.relative_to(root).as_posix())


def symlink_problem(path: Path, root: Path) -> str | None:
    """Why the symlink ``path`` may not be read (``None``: not a link, or a link to a regular
    file inside ``root``, which must be resolved)."""
    if not path.is_symlink():
        return None
    try:
        target = path.resolve(strict=True)
    except (OSError, RuntimeError):  # missing target, or a symlink loop
        return "dangling symlink"
    if not target.is_relative_to(root):
        return "symlink outside the corpus folder"
    if target.is_dir():
        return "symlink to a directory"
    if not target.is_file():
        return "symlink to a non-regular file"
    return None


def ingest(corpus: CorpusParams) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(documents, rejected) tables for the folder ``corpus.dir``."""
    root = Path(corpus.dir)
    if not root.is_dir():
        raise RagcourtError(f"corpus.dir '{root}': folder not found")
    allowed = {e.lower() for e in corpus.extensions}
    real_root = root.resolve()
    docs: list[dict[str, object]] = []
    rejected: list[dict[str, str]] = []
    first_by_hash: dict[str, str] = {}
    dup_count: dict[str, int] = {}
    for path in list_files(root):
        ext = path.suffix.lower()
        shown = path.as_posix()
        try:
            link_problem = symlink_problem(path, real_root)
            if link_problem is not None:
                raise Rejected(link_problem)
            if ext not in allowed or ext not in FORMATS:
                raise Rejected(f"unsupported extension '{ext or '(none)'}'")
            fmt = FORMATS[ext]
            parsed = parse_file(path, fmt)
            text = normalise(parsed.text)
            if not text:
                raise Rejected("empty: no text after extraction")
        except Rejected as why:
            log.warning("ingest: rejected %s: %s", shown, why)
            rejected.append({"path": shown, "reason": str(why)})
            continue
        except OSError as err:
            log.warning("ingest: rejected %s: unreadable: %s", shown, err)
            rejected.append({"path": shown, "reason": f"unreadable: {err.strerror or err}"})
            continue
        except Exception as err:  # one bad file never aborts the ingest
            reason = f"unparsable: {one_line(err)}"
            log.warning("ingest: rejected %s: %s", shown, reason)
            rejected.append({"path": shown, "reason": reason})
            continue
        h = doc_hash(text)
        duplicate_of = first_by_hash.get(h)
        doc_id = h
        if duplicate_of is None:
            first_by_hash[h] = h
        else:
            dup_count[h] = dup_count.get(h, 1) + 1
            doc_id = f"{h}-dup{dup_count[h]}"
            log.warning("ingest: %s is an exact duplicate of doc %s (not chunked)", shown, h)
        guess = detect_language(text)
        docs.append(
            {
                "doc_id": doc_id,
                "path": shown,
                "title": pick_title(parsed.title, text, path.stem),
                "format": fmt,
                "text": text,
                "n_chars": len(text),
                "duplicate_of": duplicate_of,
                "language": guess.language,
                "language_confidence": guess.confidence,
            }
        )
    documents = pl.DataFrame(docs, schema=frame_schema("documents"))
    rejected_df = pl.DataFrame(rejected, schema=frame_schema("rejected_documents"))
    if documents.is_empty():
        reasons = "; ".join(f"{r['path']}: {r['reason']}" for r in rejected[:3])
        more = f" (+{len(rejected) - 3} more)" if len(rejected) > 3 else ""
        raise RagcourtError(
            f"corpus.dir '{root}': no usable documents ({len(rejected)} rejected"
            f"{': ' + reasons if reasons else ''}{more})"
        )
    return documents, rejected_df


def run(params: Params) -> tuple[Path, Path]:
    """Ingest ``corpus.dir`` into data/documents.parquet and data/rejected_documents.parquet."""
    documents, rejected = ingest(params.corpus)
    write_parquet(rejected, REJECTED_PATH, "rejected_documents")
    write_parquet(documents, DOCUMENTS_PATH, "documents")
    n_dup = documents["duplicate_of"].is_not_null().sum()
    mix = documents["language"].value_counts(sort=True)
    log.info(
        "ingest: languages %s",
        ", ".join(f"{r['language']}={r['count']}" for r in mix.iter_rows(named=True)),
    )
    log.info(
        "ingest: %d documents (%d exact duplicates), %d rejected",
        documents.height, n_dup, rejected.height,
    )  # fmt: skip
    return DOCUMENTS_PATH, REJECTED_PATH
