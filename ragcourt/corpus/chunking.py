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
returns contiguous, whitespace-stripped slices of the document; each is located with
``str.find`` after the previous chunk's start (starts strictly increase; see
:func:`split_with_offsets` for repeated text), and a chunk that cannot be located is an
error, never a silent guess.

``chunk_id`` = ``<chunking>:<doc_id>:<chunk_index>`` (stable while the document text and the
chunking config are unchanged). Documents flagged ``duplicate_of`` are not chunked.
"""

from __future__ import annotations

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


def split_with_offsets(
    text: str,
    splitter: RecursiveCharacterTextSplitter,
    overlap: int,
    count: Callable[[str], int],
) -> list[tuple[int, int]]:
    """(char_start, char_end) of each chunk the splitter makes from ``text``.

    A chunk is located with ``str.find`` after the previous chunk's start. In repetitive text
    the same chunk text occurs several times; the splitter carries at most ``overlap`` tokens
    of the previous chunk over, so the first occurrence whose region shared with the previous
    chunk has <= ``overlap`` tokens is taken (else the first occurrence).
    """
    spans: list[tuple[int, int]] = []
    prev_start, prev_end = -1, 0
    for piece in splitter.split_text(text):
        first = start = text.find(piece, prev_start + 1)
        if start < 0:
            raise RagcourtError(
                f"chunker produced text that is not a slice of the document "
                f"(after offset {prev_start}): {piece[:60]!r}"
            )
        while start >= 0 and start < prev_end and count(text[start:prev_end]) > overlap:
            start = text.find(piece, start + 1)
        start = first if start < 0 else start
        spans.append((start, start + len(piece)))
        prev_start, prev_end = start, start + len(piece)
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
