"""Chunk stage: token-sized chunks with exact character offsets into each document.

Splitting is langchain-text-splitters' ``RecursiveCharacterTextSplitter`` with a tiktoken
length function (``chunk_tokenizer``, default ``cl100k_base``; its BPE file is read offline
from litellm's bundled copy via ``TIKTOKEN_CACHE_DIR``, see ``ragcourt.core.offline``). Chunks hold
at most ``size`` tokens (a few more are possible: the splitter adds up per-piece token counts)
and the splitter cuts at paragraph, line, sentence, clause and word boundaries in that order
of preference. Overlap is carried in whole pieces: the next chunk starts with a run of
trailing pieces (sentences, clauses...) of the previous one totalling <= ``overlap`` tokens,
so a piece longer than ``overlap`` tokens is never repeated.

Offsets: every chunk satisfies ``text == document.text[char_start:char_end]``. They are
tracked exactly by running the splitter's algorithm on spans (:func:`split_with_offsets`;
its chunk texts must equal the splitter's), so repeated text cannot misplace a chunk. Starts
never decrease (two chunks can share a start: a piece carried as overlap can be a chunk of
its own). Should the two ever disagree, :func:`locate_chunks` places the splitter's chunks by
a backtracking search; a chunk list that cannot be placed is an error, never a guess.

``chunk_id`` = ``<chunking>:<doc_id>:<chunk_index>`` (stable while the document text and the
chunking config are unchanged). Each chunk records its ``section`` (the headings enclosing its
start, "json › Basic Usage"; null for a document without headings) and its span in the
source file (``source_start``/``source_end``, from the document's ``source_map``; null
without one). Documents flagged ``duplicate_of`` are not chunked. A
document whose chunk count is an outlier (see ``corpus.chunk_outliers``) gets a one-line
warning naming it and its numbers.
"""

from __future__ import annotations

import itertools
import logging
import re
from collections.abc import Callable, Iterator
from functools import cache, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from ragcourt.core import catalog
from ragcourt.core.errors import ConfigError, RagcourtError
from ragcourt.core.io import write_with
from ragcourt.core.parquet_stream import BatchWriter, read_batches
from ragcourt.core.schemas import OPTIONAL_COLUMNS, frame_schema
from ragcourt.corpus.chunk_outliers import ChunkOutlier, find_outlier
from ragcourt.corpus.markup_map import Sections, SourceMap, headings_of, segments_of
from ragcourt.corpus.params import ChunkSpec, CorpusView

if TYPE_CHECKING:
    from langchain_text_splitters import RecursiveCharacterTextSplitter

log = logging.getLogger("ragcourt.chunk")

_NON_SPACE = re.compile(r"\S")
SEPARATORS = ["\n\n", "\n", ". ", "? ", "! ", "; ", ", ", " ", ""]


@cache
def token_counter(tokenizer: str) -> Callable[[str], int]:
    """Number of ``tokenizer`` tokens in a text (special-token strings count as plain text)."""
    import tiktoken

    try:
        enc = tiktoken.get_encoding(tokenizer)
    except ValueError:
        raise ConfigError(f"chunk_tokenizer: unknown tiktoken encoding '{tokenizer}'") from None
    except Exception as err:  # network error when the BPE file is not cached locally
        raise ConfigError(
            f"chunk_tokenizer: encoding '{tokenizer}' is not available offline "
            f"(TIKTOKEN_CACHE_DIR has no copy): {type(err).__name__}"
        ) from None

    @lru_cache(maxsize=8192)  # the splitter and the offset tracking count the same pieces
    def count(text: str) -> int:
        return len(enc.encode(text, disallowed_special=()))

    return count


def make_splitter(spec: ChunkSpec, tokenizer: str) -> RecursiveCharacterTextSplitter:
    """The recursive splitter of ``spec`` measuring length in ``tokenizer`` tokens."""
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    return RecursiveCharacterTextSplitter(
        chunk_size=spec.size,
        chunk_overlap=spec.overlap,
        length_function=token_counter(tokenizer),
        separators=SEPARATORS,
        keep_separator="end",
        strip_whitespace=True,
    )


def _next_text(text: str, pos: int) -> int:
    """Index of the first non-whitespace character at or after ``pos`` (``len(text)`` if none)."""
    m = _NON_SPACE.search(text, pos)
    return m.start() if m else len(text)


def locate_chunks(
    text: str, chunks: list[str], overlap: int | None, count: Callable[[str], int]
) -> list[tuple[int, int]] | None:
    """Offsets of ``chunks`` in ``text`` consistent with how the splitter cut them, or None.

    The splitter's pieces concatenate to the text and each chunk is a stripped run of pieces,
    so a placement is valid iff: ``text[start:end] == chunk``; starts never decrease; the
    first chunk starts at the first non-whitespace character, the last one leaves only
    whitespace after it, and between consecutive chunks lies only whitespace (``start <=``
    next non-space at or after the previous end); and, when ``overlap`` is set, the region
    shared with the previous chunk has ``<= overlap`` tokens. Depth-first search over the
    occurrences in that window, earliest first (the splitter carries the longest overlap that
    fits), backtracking with a memo of dead (chunk index, start) states; iterative, so a
    document with 100k chunks needs no deep recursion. Gives up (None) after
    ``200 * len(chunks) + 10_000`` search states (long runs of repeated text).
    """
    if not chunks:
        return [] if not text.strip() else None

    def candidates(i: int, prev: tuple[int, int] | None) -> list[int]:
        piece = chunks[i]
        lo, hi = (0, _next_text(text, 0)) if prev is None else (prev[0], _next_text(text, prev[1]))
        out: list[int] = []
        p = text.find(piece, lo, hi + len(piece))
        while 0 <= p <= hi:
            if (
                overlap is None
                or prev is None
                or p >= prev[1]
                or count(text[p : prev[1]]) <= overlap
            ):
                out.append(p)
            p = text.find(piece, p + 1, hi + len(piece))
        return out

    dead: set[tuple[int, int]] = set()
    budget = 200 * len(chunks) + 10_000  # search states; beyond that: no placement (None)
    starts: list[int] = []
    stack: list[list[int]] = [candidates(0, None)[::-1]]  # per level: untried starts, last first
    while stack:
        i = len(stack) - 1
        options = stack[-1]
        while options and (i, options[-1]) in dead:
            options.pop()
        if not options:
            stack.pop()
            if starts:
                dead.add((i - 1, starts.pop()))
            continue
        p = options.pop()
        budget -= 1
        if budget < 0:
            return None
        span = (p, p + len(chunks[i]))
        if i == len(chunks) - 1:
            if _next_text(text, span[1]) == len(text):
                starts.append(p)
                return [(st, st + len(c)) for st, c in zip(starts, chunks, strict=True)]
            dead.add((i, p))
            continue
        starts.append(p)
        stack.append(candidates(i + 1, span)[::-1])
    return None


def _stripped(text: str, start: int, end: int) -> tuple[int, int] | None:
    """``(start, end)`` narrowed to ``text[start:end].strip()``; None if only whitespace."""
    piece = text[start:end]
    kept = piece.strip()
    if not kept:
        return None
    lead = len(piece) - len(piece.lstrip())
    return start + lead, start + lead + len(kept)


def _piece_spans(text: str, start: int, end: int, separator: str) -> list[tuple[int, int]]:
    """Pieces of ``text[start:end]`` cut after each ``separator`` (single characters for "")."""
    if not separator:
        return [(i, i + 1) for i in range(start, end)]
    cuts = [m.end() for m in re.finditer(re.escape(separator), text[start:end])]
    bounds = [start, *(start + c for c in cuts), end]
    return [(a, b) for a, b in itertools.pairwise(bounds) if b > a]


def _merge_spans(
    text: str, pieces: list[tuple[int, int, int]], size: int, overlap: int
) -> list[tuple[int, int]]:
    """Chunks from consecutive (start, end, tokens) pieces: fill up to ``size`` tokens, then
    carry trailing pieces totalling <= ``overlap`` tokens into the next chunk."""
    out: list[tuple[int, int]] = []
    current: list[tuple[int, int, int]] = []
    total = 0
    for piece in pieces:
        if total + piece[2] > size and current:
            span = _stripped(text, current[0][0], current[-1][1])
            if span is not None:
                out.append(span)
            while total > overlap or (total + piece[2] > size and total > 0):
                total -= current[0][2]
                current = current[1:]
        current.append(piece)
        total += piece[2]
    if current:
        span = _stripped(text, current[0][0], current[-1][1])
        if span is not None:
            out.append(span)
    return out


def _split_spans(
    text: str,
    start: int,
    end: int,
    separators: list[str],
    spec: ChunkSpec,
    count: Callable[[str], int],
) -> list[tuple[int, int]]:
    """Chunk spans of ``text[start:end]``, the recursive splitter's algorithm on offsets:
    split at the first separator present; pieces under ``size`` tokens are merged, longer
    ones split again with the finer separators (kept whole when none is left)."""
    sub = text[start:end]
    separator, finer = separators[-1], []
    for i, sep in enumerate(separators):
        if not sep or sep in sub:
            separator, finer = sep, separators[i + 1 :] if sep else []
            break
    spans: list[tuple[int, int]] = []
    good: list[tuple[int, int, int]] = []
    for a, b in _piece_spans(text, start, end, separator):
        n = count(text[a:b])
        if n < spec.size:
            good.append((a, b, n))
            continue
        if good:
            spans += _merge_spans(text, good, spec.size, spec.overlap)
            good = []
        spans += _split_spans(text, a, b, finer, spec, count) if finer else [(a, b)]
    if good:
        spans += _merge_spans(text, good, spec.size, spec.overlap)
    return spans


def split_with_offsets(
    text: str,
    splitter: RecursiveCharacterTextSplitter,
    spec: ChunkSpec,
    count: Callable[[str], int],
) -> list[tuple[int, int]]:
    """(char_start, char_end) of each chunk the splitter makes from ``text``.

    Offsets are tracked exactly by running the splitter's algorithm on spans
    (:func:`_split_spans`); the chunk texts must equal ``splitter.split_text(text)``. If they
    ever differ (another splitter version), the splitter's chunks are placed by
    :func:`locate_chunks` instead; no valid placement is an error, never a guess.
    """
    chunks = splitter.split_text(text)
    spans = _split_spans(text, 0, len(text), SEPARATORS, spec, count)
    if [text[a:b] for a, b in spans] == chunks:
        return spans
    log.warning("chunk: offset tracking disagrees with the splitter; locating chunks instead")
    located = locate_chunks(text, chunks, spec.overlap, count)
    if located is None:
        located = locate_chunks(text, chunks, None, count)
    if located is None:
        raise RagcourtError(
            f"chunker produced {len(chunks)} chunks that cannot be placed as consecutive "
            f"slices of the document (first: {chunks[0][:60] if chunks else ''!r})"
        )
    return located


CHUNK_COLUMNS = {**frame_schema("chunks"), **OPTIONAL_COLUMNS["chunks"]}


def _with_context(documents: pl.DataFrame) -> pl.DataFrame:
    """doc_id, path, text, headings, source_map (the last two null when the table, written
    before they existed or by hand, has none)."""
    cols = [pl.col("doc_id", "path", "text")]
    for name, dtype in OPTIONAL_COLUMNS["documents"].items():
        cols.append(pl.col(name) if name in documents.columns else pl.lit(None, dtype).alias(name))
    return documents.select(cols)


def chunk_context(
    start: int, end: int, sections: Sections, source: SourceMap | None
) -> dict[str, object]:
    """A chunk's ``section`` (the path at its start) and ``source_start``/``source_end`` (its
    span in the source file, :meth:`~ragcourt.corpus.markup_map.SourceMap.span`)."""
    span = source.span(start, end) if source is not None else None
    return {
        "section": sections.at(start),
        "source_start": span[0] if span else None,
        "source_end": span[1] if span else None,
    }


def document_chunks(
    documents: pl.DataFrame, chunking: str, spec: ChunkSpec, tokenizer: str
) -> Iterator[tuple[list[dict[str, object]], ChunkOutlier | None]]:
    """Per non-duplicate document, in document order: its ``chunks`` rows and its outlier
    record (None unless its chunk count is an outlier; each is logged as a one-line warning)."""
    splitter = make_splitter(spec, tokenizer)
    count = token_counter(tokenizer)
    kept = documents.filter(pl.col("duplicate_of").is_null())
    for doc_id, path, text, heads, smap in _with_context(kept).iter_rows():
        spans = split_with_offsets(text, splitter, spec, count)
        sections, source = Sections.of(headings_of(heads)), segments_of(smap)
        mapped = SourceMap.of(source) if source is not None else None
        outlier = find_outlier(doc_id, path, text, spans, spec, count)
        if outlier is not None:
            log.warning("%s", outlier.warning(chunking))
        rows: list[dict[str, object]] = []
        for i, (start, end) in enumerate(spans):
            piece = text[start:end]
            rows.append(
                {
                    "chunk_id": f"{chunking}:{doc_id}:{i}",
                    "chunking": chunking,
                    "doc_id": doc_id,
                    "chunk_index": i,
                    "char_start": start,
                    "char_end": end,
                    "n_tokens": count(piece),
                    "text": piece,
                    **chunk_context(start, end, sections, mapped),
                }
            )
        yield rows, outlier


def chunk_table(
    documents: pl.DataFrame, chunking: str, spec: ChunkSpec, tokenizer: str
) -> tuple[pl.DataFrame, list[ChunkOutlier]]:
    """Table ``chunks`` for every non-duplicate document, in document order, and the
    documents with an outlier chunk count (each logged as a one-line warning)."""
    rows: list[dict[str, object]] = []
    outliers: list[ChunkOutlier] = []
    for doc_rows, outlier in document_chunks(documents, chunking, spec, tokenizer):
        rows.extend(doc_rows)
        if outlier is not None:
            outliers.append(outlier)
    return pl.DataFrame(rows, schema=CHUNK_COLUMNS), outliers


def chunk_documents(
    documents: pl.DataFrame, chunking: str, spec: ChunkSpec, tokenizer: str
) -> pl.DataFrame:
    """Table ``chunks`` for every non-duplicate document (outliers only logged)."""
    return chunk_table(documents, chunking, spec, tokenizer)[0]


DOCUMENT_BATCH = 256  # documents chunked per row group at most
BATCH_CHARS = 4_000_000  # chunk text per row group at most (plus one document's)
READ_DOCUMENTS = 16  # documents read per step (a read may span the input's row groups)


def run(params: CorpusView, chunking: str) -> Path:
    """Chunk data/documents.parquet with config ``chunking`` into data/chunks/<chunking>.parquet:
    documents are read :data:`READ_DOCUMENTS` at a time and a row group is written after
    :data:`DOCUMENT_BATCH` documents or :data:`BATCH_CHARS` characters of chunk text (the rows
    of a whole-table pass, in order), so memory stays bounded however long the documents are."""
    if chunking not in params.chunkings:
        raise ConfigError(
            f"chunking '{chunking}' is not one of chunkings {sorted(params.chunkings)}"
        )
    spec, src = params.chunkings[chunking], catalog.path("documents")
    tally = {"chunks": 0, "documents": 0, "outliers": 0}

    def flush(writer: BatchWriter, rows: list[dict[str, object]]) -> None:
        if rows:
            writer.write(pl.DataFrame(rows, schema=CHUNK_COLUMNS))
            tally["chunks"] += len(rows)
            rows.clear()

    def write(tmp: Path) -> None:
        rows: list[dict[str, object]] = []
        chars = docs = 0
        with BatchWriter(tmp, "chunks") as writer:
            for documents in read_batches(src, "documents", READ_DOCUMENTS):
                for doc_rows, outlier in document_chunks(
                    documents, chunking, spec, params.chunk_tokenizer
                ):
                    rows.extend(doc_rows)
                    chars += sum(len(str(r["text"])) for r in doc_rows)
                    docs += 1
                    tally["documents"] += bool(doc_rows)
                    tally["outliers"] += outlier is not None
                    if chars >= BATCH_CHARS or docs >= DOCUMENT_BATCH:
                        flush(writer, rows)
                        chars = docs = 0
            flush(writer, rows)
        if not tally["chunks"]:
            raise RagcourtError(f"{src}: no chunks produced (all documents empty?)")

    out = write_with(catalog.path("chunks", chunking=chunking), write)
    if tally["outliers"]:
        log.warning(
            "chunk %s: %d of %d documents have an outlier chunk count (warnings above)",
            chunking, tally["outliers"], tally["documents"],
        )  # fmt: skip
    return out
