"""Chunk stage: token-sized chunks with exact character offsets into each document.

Splitting is langchain-text-splitters' ``RecursiveCharacterTextSplitter`` with a tiktoken
length function (``chunk_tokenizer``, default ``cl100k_base``; its BPE file is read offline
from litellm's bundled copy via ``TIKTOKEN_CACHE_DIR``, see ``ragcourt.core.offline``). Chunks hold
at most ``size`` tokens (a few more are possible: the splitter adds up per-piece token counts)
and the splitter cuts at paragraph, line, sentence, clause and word boundaries in that order
of preference. Overlap is carried in whole pieces: the next chunk starts with a run of
trailing pieces (sentences, clauses...) of the previous one totalling <= ``overlap`` tokens,
so a piece longer than ``overlap`` tokens is never repeated.

Offsets: every chunk satisfies ``text == document.text[char_start:char_end]``. The splitter
returns whitespace-stripped runs of pieces that tile the document; each chunk is placed by
:func:`locate_chunks`, a backtracking search for the placement in which starts strictly
increase, only whitespace lies between or around chunks, and a region shared with the
previous chunk holds at most ``overlap`` tokens (repeated text has several occurrences; the
earliest consistent one wins). A chunk list that cannot be placed is an error, never a guess.

``chunk_id`` = ``<chunking>:<doc_id>:<chunk_index>`` (stable while the document text and the
chunking config are unchanged). Documents flagged ``duplicate_of`` are not chunked.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from ragcourt.core import catalog
from ragcourt.core.errors import ConfigError, RagcourtError
from ragcourt.core.io import read_table, write_parquet
from ragcourt.core.params import ChunkSpec, Params
from ragcourt.core.schemas import frame_schema

if TYPE_CHECKING:
    from langchain_text_splitters import RecursiveCharacterTextSplitter

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
    so a placement is valid iff: ``text[start:end] == chunk``; starts strictly increase; the
    first chunk starts at the first non-whitespace character, the last one leaves only
    whitespace after it, and between consecutive chunks lies only whitespace (``start <=``
    next non-space at or after the previous end); and, when ``overlap`` is set, the region
    shared with the previous chunk has ``<= overlap`` tokens. Depth-first search over the
    occurrences in that window, earliest first (the splitter carries the longest overlap that
    fits), backtracking with a memo of dead (chunk index, start) states; iterative, so a
    document with 100k chunks needs no deep recursion.
    """
    if not chunks:
        return [] if not text.strip() else None

    def candidates(i: int, prev: tuple[int, int] | None) -> list[int]:
        piece = chunks[i]
        lo, hi = (
            (0, _next_text(text, 0)) if prev is None else (prev[0] + 1, _next_text(text, prev[1]))
        )
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


def split_with_offsets(
    text: str,
    splitter: RecursiveCharacterTextSplitter,
    overlap: int,
    count: Callable[[str], int],
) -> list[tuple[int, int]]:
    """(char_start, char_end) of each chunk the splitter makes from ``text``.

    Located by :func:`locate_chunks` with the overlap rule, else (token counts of a carried
    run can differ from the splitter's per-piece sum) without it; no valid placement is an
    error, never a guess.
    """
    chunks = splitter.split_text(text)
    spans = locate_chunks(text, chunks, overlap, count)
    if spans is None:
        spans = locate_chunks(text, chunks, None, count)
    if spans is None:
        raise RagcourtError(
            f"chunker produced {len(chunks)} chunks that cannot be placed as consecutive "
            f"slices of the document (first: {chunks[0][:60] if chunks else ''!r})"
        )
    return spans


def chunk_documents(
    documents: pl.DataFrame, chunking: str, spec: ChunkSpec, tokenizer: str
) -> pl.DataFrame:
    """Table ``chunks`` for every non-duplicate document, in document order."""
    splitter = make_splitter(spec, tokenizer)
    count = token_counter(tokenizer)
    rows: list[dict[str, object]] = []
    kept = documents.filter(pl.col("duplicate_of").is_null())
    for doc_id, text in kept.select("doc_id", "text").iter_rows():
        for i, (start, end) in enumerate(split_with_offsets(text, splitter, spec.overlap, count)):
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
                }
            )
    return pl.DataFrame(rows, schema=frame_schema("chunks"))


def run(params: Params, chunking: str) -> Path:
    """Chunk data/documents.parquet with config ``chunking`` into data/chunks/<chunking>.parquet."""
    if chunking not in params.chunkings:
        raise ConfigError(
            f"chunking '{chunking}' is not one of chunkings {sorted(params.chunkings)}"
        )
    documents = read_table(catalog.path("documents"), "documents")
    chunks = chunk_documents(
        documents, chunking, params.chunkings[chunking], params.chunk_tokenizer
    )
    if chunks.is_empty():
        raise RagcourtError(
            f"{catalog.path('documents')}: no chunks produced (all documents empty?)"
        )
    return write_parquet(chunks, catalog.path("chunks", chunking=chunking), "chunks")
