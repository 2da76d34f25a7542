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
* Markup is rendered to text: reStructuredText through docutils, Markdown through
  markdown-it-py (:mod:`ragcourt.corpus.markup_rst`, :mod:`ragcourt.corpus.markup_md`); each
  such document also records its ``headings`` (text offset, depth, text), and it and a plain
  text file a ``source_map`` from its text back to the file (:mod:`ragcourt.corpus.markup_map`;
  null for HTML and PDF).
* Title: HTML <title> or first <h1>; reStructuredText and Markdown: the first heading, else
  the file name stem; PDF metadata title; otherwise the first line if it is short (<= 120
  chars) and not the whole text, else the file name stem.
* Symlinks are never followed out of the corpus folder, and directory symlinks are never
  descended into: a link whose resolved target lies outside ``corpus.dir`` ("symlink outside
  the corpus folder"), a dangling or looping link ("dangling symlink"), a link to a directory
  ("symlink to a directory") or to anything but a regular file ("symlink to a non-regular
  file") is a rejected row. A link to a regular file inside the corpus folder is read like that
  file (if the target is in the corpus too, the later path is an exact duplicate, not chunked).
* Only regular files are read: each is opened beneath the corpus folder one path component at
  a time with ``O_NOFOLLOW`` (the file ``O_NONBLOCK``) and checked with ``fstat`` on the
  descriptor, so a FIFO, socket or device, listed or swapped in after listing, is a rejected
  row ("not a regular file (a FIFO)") and never blocks the stage. A file name that is not
  UTF-8 is a rejected row ("undecodable file name"), shown with ``\\xNN`` escapes; a folder
  that cannot be listed is one too.
* Budgets (``corpus`` params; a file past one is a rejected row naming the key): the file's
  bytes (``max_file_bytes``, also the decoded page contents of a PDF), its text
  (``max_file_chars``), a PDF's pages (``max_pdf_pages``), HTML nesting (``html_max_depth``,
  checked by a linear scan before parsing), and the time and memory of parsing:
  every file is parsed in a worker process (:mod:`ragcourt.corpus.parse_worker`) that is
  killed past ``file_timeout_s`` or ``parse_memory_mb``. Format details:
  :mod:`ragcourt.corpus.formats`.
* Every rejected file is logged as a warning (control characters in names escaped, one line
  per file); zero usable documents is a RagcourtError.
* Language: every document gets ``language`` (ISO 639-1, ``und`` without letters) and
  ``language_confidence`` from :func:`ragcourt.corpus.language.detect_language` (seeded, so a
  re-run writes the same table); the stage logs the language mix.
"""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import stat
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import polars as pl

from ragcourt.core import catalog
from ragcourt.core.errors import RagcourtError, one_line
from ragcourt.core.io import write_parquet, write_with
from ragcourt.core.parquet_stream import BatchWriter
from ragcourt.core.schemas import OPTIONAL_COLUMNS, frame_schema
from ragcourt.corpus.formats import (
    MAX_TITLE_CHARS,
    Budget,
    Parsed,
    Rejected,
    decode_text,
    exception_line,
    normalise,
    parse_html,
    parse_pdf,
)
from ragcourt.corpus.language import detect_language
from ragcourt.corpus.params import CorpusParams, CorpusView
from ragcourt.corpus.parse_worker import ParseWorker

__all__ = [
    "Parsed",
    "Rejected",
    "decode_text",
    "doc_hash",
    "ingest",
    "list_files",
    "normalise",
    "parse_html",
    "parse_pdf",
    "run",
]

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
_READ_CHUNK = 1 << 20
MARKUP = frozenset({"rst", "markdown"})  # titled by their first heading, else the file stem
DOCUMENT_COLUMNS = {**frame_schema("documents"), **OPTIONAL_COLUMNS["documents"]}


def map_columns(parsed: Parsed) -> dict[str, object]:
    """The ``headings`` and ``source_map`` cells of a parsed file (None where it has none)."""
    heads = [asdict(h) for h in parsed.headings] if parsed.headings is not None else None
    segs = [asdict(s) for s in parsed.segments] if parsed.segments is not None else None
    return {"headings": heads, "source_map": segs}


# ---------------------------------------------------------------------------------------------
# Titles and ids


def pick_title(parsed_title: str | None, text: str, stem: str, first_line: bool = True) -> str:
    """The parsed title; else (``first_line``) the text's first line when short and not the
    whole text; else the file stem (module docstring)."""
    if parsed_title:
        return parsed_title[:MAX_TITLE_CHARS]
    if not first_line:
        return stem
    first = text.split("\n", 1)[0].strip()
    if first and len(first) <= MAX_TITLE_CHARS and first != text:
        return first
    return stem


def doc_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


# ---------------------------------------------------------------------------------------------
# The stage


def list_files(root: Path, unlisted: list[tuple[Path, str]] | None = None) -> list[Path]:
    """Every entry under ``root`` but folders (regular files, symlinks to anything, FIFOs,
    sockets, devices) in sorted relative-path order; hidden files/folders skipped; directory
    symlinks are listed, never descended into. A folder that cannot be listed is appended to
    ``unlisted`` as ``(path, reason)``."""
    out: list[Path] = []
    pending = [root]
    while pending:
        here = pending.pop()
        try:
            with os.scandir(here) as it:
                entries = list(it)
        except OSError as err:
            if unlisted is not None:
                unlisted.append((here, f"unreadable folder: {err.strerror or err}"))
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            p = here / entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            (pending if is_dir else out).append(p)
    return sorted(out, key=lambda q: q.relative_to(root).as_posix())


def shown_path(path: Path) -> str:
    """``path`` as text for tables: bytes that are not UTF-8 shown as ``\\xNN`` escapes."""
    return os.fsencode(path.as_posix()).decode("utf-8", "backslashreplace")


def has_undecodable_name(path: Path) -> bool:
    """True when the file system name holds bytes that are not UTF-8 (Python keeps them as
    lone surrogates, which no table, log or JSON file can hold)."""
    try:
        path.as_posix().encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


_KINDS = {
    stat.S_IFIFO: "a FIFO",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFDIR: "a folder",
    stat.S_IFLNK: "a symlink",
}


def not_regular(mode: int) -> Rejected:
    return Rejected(f"not a regular file ({_KINDS.get(stat.S_IFMT(mode), 'a special file')})")


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


def open_beneath(root: Path, rel: Path) -> int:
    """A read-only descriptor of ``root/rel`` opened one component at a time without following
    any symlink (``O_NOFOLLOW``), the file itself ``O_NONBLOCK`` (a FIFO does not block the
    open); what it is must then be checked on the descriptor (:func:`read_regular`)."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        *folders, name = rel.parts
        for part in folders:
            nxt = os.open(
                part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd
            )
            os.close(fd)
            fd = nxt
        flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NOCTTY
        return os.open(name, flags, dir_fd=fd)
    finally:
        os.close(fd)


def read_regular(root: Path, rel: Path, max_bytes: int) -> bytes:
    """The bytes of the regular file ``root/rel`` (:func:`open_beneath`, then ``fstat`` on the
    descriptor: a file swapped for a FIFO, device or symlink after listing is Rejected, never
    read); more than ``max_bytes`` is Rejected without reading the rest."""
    too_large = f"over corpus.max_file_bytes ({max_bytes:,} bytes)"
    try:
        fd = open_beneath(root, rel)
    except OSError as err:
        if err.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            raise Rejected("changed while reading: a path component is now a symlink") from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise not_regular(st.st_mode)
        if st.st_size > max_bytes:
            raise Rejected(f"too large: {st.st_size:,} bytes, {too_large}")
        chunks, total = [], 0
        while True:
            chunk = os.read(fd, min(_READ_CHUNK, max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > max_bytes:
                raise Rejected(f"too large: grew while reading, {too_large}")
        return b"".join(chunks)
    finally:
        os.close(fd)


def file_budget(corpus: CorpusParams) -> Budget:
    return Budget(
        max_bytes=corpus.max_file_bytes,
        max_chars=corpus.max_file_chars,
        max_pages=corpus.max_pdf_pages,
        html_max_depth=corpus.html_max_depth,
    )


def _reject(rejected: list[dict[str, str]], shown: str, reason: str) -> None:
    log.warning("ingest: rejected %s: %s", one_line(shown), one_line(reason))
    rejected.append({"path": shown, "reason": reason})


def _read_and_parse(
    path: Path, root: Path, real_root: Path, allowed: set[str], budget: Budget, worker: ParseWorker
) -> tuple[Parsed, str]:
    """(parsed text, format) of one listed file; Rejected (or OSError) when it is not a
    regular file or an in-root symlink, has a name that is not UTF-8, an extension not
    allowed, or no text (``real_root``: ``root`` resolved)."""
    if has_undecodable_name(path):
        raise Rejected("undecodable file name: not valid UTF-8")
    mode = path.lstat().st_mode
    if stat.S_ISLNK(mode):
        link_problem = symlink_problem(path, real_root)
        if link_problem is not None:
            raise Rejected(link_problem)
        rel = path.resolve(strict=True).relative_to(real_root)
    elif stat.S_ISREG(mode):
        rel = path.relative_to(root)
    else:
        raise not_regular(mode)
    ext = path.suffix.lower()
    if ext not in allowed or ext not in FORMATS:
        raise Rejected(f"unsupported extension '{ext or '(none)'}'")
    fmt = FORMATS[ext]
    parsed = worker.parse(read_regular(real_root, rel, budget.max_bytes), fmt, budget)
    if not parsed.text:
        raise Rejected("empty: no text after extraction")
    return parsed, fmt


class _DocIds:
    """Document ids: the text's hash; an exact duplicate gets ``<hash>-dup<n>`` and names the
    first copy in ``duplicate_of``."""

    def __init__(self) -> None:
        self._copies: dict[str, int] = {}

    def of(self, text: str, shown: str) -> tuple[str, str | None]:
        """(doc_id, duplicate_of) of the next document with ``text``."""
        h = doc_hash(text)
        n = self._copies.get(h, 0) + 1
        self._copies[h] = n
        if n == 1:
            return h, None
        log.warning("ingest: %s is an exact duplicate of doc %s (not chunked)", one_line(shown), h)
        return f"{h}-dup{n}", h


def _no_documents(root: Path, rejected: list[dict[str, str]]) -> RagcourtError:
    reasons = "; ".join(f"{r['path']}: {r['reason']}" for r in rejected[:3])
    more = f" (+{len(rejected) - 3} more)" if len(rejected) > 3 else ""
    return RagcourtError(
        f"corpus.dir '{root}': no usable documents ({len(rejected)} rejected"
        f"{': ' + reasons if reasons else ''}{more})"
    )


def iter_documents(
    corpus: CorpusParams, rejected: list[dict[str, str]]
) -> Iterator[dict[str, object]]:
    """The rows of table ``documents`` for the folder ``corpus.dir``, one file at a time, read
    and parsed within its budget (:class:`~ragcourt.corpus.formats.Budget`,
    ``corpus.file_timeout_s``); each file refused is appended to ``rejected``."""
    root = Path(corpus.dir)
    if not root.is_dir():
        raise RagcourtError(f"corpus.dir '{root}': folder not found")
    allowed = {e.lower() for e in corpus.extensions}
    real_root = root.resolve()
    budget = file_budget(corpus)
    ids = _DocIds()
    unlisted: list[tuple[Path, str]] = []
    paths = list_files(root, unlisted)
    for folder, reason in unlisted:
        _reject(rejected, shown_path(folder), reason)
    with ParseWorker(corpus.file_timeout_s, corpus.parse_memory_mb) as worker:
        for path in paths:
            shown = shown_path(path)
            try:
                parsed, fmt = _read_and_parse(path, root, real_root, allowed, budget, worker)
            except Rejected as why:
                _reject(rejected, shown, str(why))
                continue
            except OSError as err:
                _reject(rejected, shown, f"unreadable: {err.strerror or err}")
                continue
            except RagcourtError:  # the stage cannot parse at all (no parser process)
                raise
            except Exception as err:  # one bad file never aborts the ingest
                _reject(rejected, shown, f"unparsable: {exception_line(err)}")
                continue
            text = parsed.text
            doc_id, duplicate_of = ids.of(text, shown)
            guess = detect_language(text)
            yield {
                "doc_id": doc_id,
                "path": shown,
                "title": pick_title(parsed.title, text, path.stem, first_line=fmt not in MARKUP),
                "format": fmt,
                "text": text,
                "n_chars": len(text),
                "duplicate_of": duplicate_of,
                "language": guess.language,
                "language_confidence": guess.confidence,
                **map_columns(parsed),
            }


def ingest(corpus: CorpusParams) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(documents, rejected) tables for the folder ``corpus.dir`` (:func:`iter_documents`),
    whole in memory."""
    rejected: list[dict[str, str]] = []
    docs = list(iter_documents(corpus, rejected))
    if not docs:
        raise _no_documents(Path(corpus.dir), rejected)
    documents = pl.DataFrame(docs, schema=DOCUMENT_COLUMNS)
    return documents, pl.DataFrame(rejected, schema=frame_schema("rejected_documents"))


DOCUMENT_BATCH = 256  # documents parsed and written per step at most (bounded memory)
BATCH_CHARS = 4_000_000  # document text per step at most (plus the last document's)


def write_documents(corpus: CorpusParams, rejected: list[dict[str, str]]) -> dict[str, Any]:
    """Write table ``documents`` at data/documents.parquet, a row group whenever
    :data:`DOCUMENT_BATCH` documents or :data:`BATCH_CHARS` characters of text are parsed (the
    rows :func:`ingest` gives, in order); returns counts for the log."""
    if not Path(corpus.dir).is_dir():  # before the output folder is made
        raise RagcourtError(f"corpus.dir '{corpus.dir}': folder not found")
    tally: dict[str, Any] = {"documents": 0, "duplicates": 0, "languages": Counter()}

    def flush(writer: BatchWriter, batch: list[dict[str, object]]) -> None:
        frame = pl.DataFrame(batch, schema=DOCUMENT_COLUMNS)
        writer.write(frame)
        tally["documents"] += frame.height
        tally["duplicates"] += frame["duplicate_of"].is_not_null().sum()
        tally["languages"].update(frame["language"].to_list())
        batch.clear()

    def write(tmp: Path) -> None:
        batch: list[dict[str, object]] = []
        chars = 0
        with BatchWriter(tmp, "documents") as writer:
            for doc in iter_documents(corpus, rejected):
                batch.append(doc)
                chars += len(str(doc["text"]))
                if len(batch) >= DOCUMENT_BATCH or chars >= BATCH_CHARS:
                    flush(writer, batch)
                    chars = 0
            if batch:
                flush(writer, batch)
        if not tally["documents"]:
            raise _no_documents(Path(corpus.dir), rejected)

    write_with(DOCUMENTS_PATH, write)
    return tally


def run(params: CorpusView) -> tuple[Path, Path]:
    """Ingest ``corpus.dir`` into data/documents.parquet and data/rejected_documents.parquet,
    streamed: memory holds one batch of documents, whatever the corpus size."""
    rejected: list[dict[str, str]] = []
    tally = write_documents(params.corpus, rejected)
    frame = pl.DataFrame(rejected, schema=frame_schema("rejected_documents"))
    write_parquet(frame, REJECTED_PATH, "rejected_documents")
    mix = sorted(tally["languages"].items(), key=lambda kv: (-kv[1], kv[0]))
    log.info("ingest: languages %s", ", ".join(f"{lang}={n}" for lang, n in mix))
    log.info(
        "ingest: %d documents (%d exact duplicates), %d rejected",
        tally["documents"], tally["duplicates"], len(rejected),
    )  # fmt: skip
    return DOCUMENTS_PATH, REJECTED_PATH
