"""Chunking: exact char offsets (property over random documents), sizes, ids, duplicates."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragcourt.core.errors import ConfigError
from ragcourt.core.params import ChunkSpec
from ragcourt.core.schemas import TABLES, check
from ragcourt.corpus.chunking import chunk_documents, token_counter

TOKENIZER = "cl100k_base"

WORDS = st.text(
    alphabet=st.characters(
        codec="utf-8", categories=("L", "N", "P", "S", "Zs"), exclude_characters="\x00"
    ),
    min_size=1,
    max_size=12,
)
SEPS = st.sampled_from([" ", " ", " ", "\n", "\n\n", ". ", ", ", "! ", "\t", "  ", "\r\n"])


@st.composite
def documents(draw: st.DrawFn) -> str:
    parts = draw(st.lists(st.tuples(WORDS, SEPS), min_size=1, max_size=300))
    return "".join(w + s for w, s in parts).strip() or "x"


def docs_frame(texts: list[str], duplicate_of: list[str | None] | None = None) -> pl.DataFrame:
    n = len(texts)
    return pl.DataFrame(
        {
            "doc_id": [f"d{i}" for i in range(n)],
            "path": [f"f{i}.txt" for i in range(n)],
            "title": ["t"] * n,
            "format": ["text"] * n,
            "text": texts,
            "n_chars": [len(t) for t in texts],
            "duplicate_of": duplicate_of or [None] * n,
            "language": ["en"] * n,
            "language_confidence": [1.0] * n,
        },
        schema=TABLES["documents"],
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    texts=st.lists(documents(), min_size=1, max_size=3),
    size=st.integers(min_value=8, max_value=64),
    overlap_frac=st.floats(min_value=0.0, max_value=0.6),
)
def test_chunk_text_is_exactly_the_document_slice(
    texts: list[str], size: int, overlap_frac: float
) -> None:
    spec = ChunkSpec(size=size, overlap=int(size * overlap_frac))
    docs = docs_frame(texts)
    chunks = chunk_documents(docs, "cx", spec, TOKENIZER)
    check(chunks, "chunks", "<test>")
    by_doc = dict(zip(docs["doc_id"], docs["text"], strict=True))
    count = token_counter(TOKENIZER)
    for row in chunks.iter_rows(named=True):
        text = by_doc[row["doc_id"]]
        assert row["text"] == text[row["char_start"] : row["char_end"]]
        assert row["text"] == row["text"].strip() and row["text"]
        assert row["n_tokens"] == count(row["text"])
    for doc_id, text in by_doc.items():
        mine = chunks.filter(pl.col("doc_id") == doc_id).sort("chunk_index")
        starts = mine["char_start"].to_list()
        assert starts == sorted(set(starts)), "starts strictly increase"
        assert mine["chunk_index"].to_list() == list(range(mine.height))
        # every non-whitespace character of the document lies in some chunk
        covered = [False] * len(text)
        for s, e in zip(mine["char_start"], mine["char_end"], strict=True):
            covered[s:e] = [True] * (e - s)
        assert all(c or ch.isspace() for c, ch in zip(covered, text, strict=True))


def test_sizes_and_overlap_on_prose() -> None:
    sentence = (
        "The Congress shall assemble at least once in every year, and such meeting shall be. "
    )
    text = (sentence * 120).strip()
    count = token_counter(TOKENIZER)
    assert count(sentence.strip()) == 17
    # overlap is carried in whole pieces (here sentences): 20 tokens keep one sentence
    spec = ChunkSpec(size=64, overlap=20)
    chunks = chunk_documents(docs_frame([text]), "c64", spec, TOKENIZER)
    assert chunks.height > 5
    assert chunks["n_tokens"].max() <= 64 + 2  # merge counts tokens per piece; joins may differ
    assert chunks["n_tokens"].min() > 0
    ends, starts = chunks["char_end"].to_list(), chunks["char_start"].to_list()
    for s, e in zip(starts[1:], ends[:-1], strict=True):  # exactly one sentence shared
        assert text[s:e] == sentence.strip()
    no_overlap = chunk_documents(
        docs_frame([text]), "c64", ChunkSpec(size=64, overlap=0), TOKENIZER
    )
    n_ends, n_starts = no_overlap["char_end"].to_list(), no_overlap["char_start"].to_list()
    assert all(s >= e for s, e in zip(n_starts[1:], n_ends[:-1], strict=True))


def test_chunk_ids_are_stable_and_duplicates_are_skipped() -> None:
    docs = docs_frame(["alpha beta gamma. " * 50, "alpha beta gamma. " * 50], [None, "d0"])
    spec = ChunkSpec(size=32, overlap=4)
    a = chunk_documents(docs, "c32", spec, TOKENIZER)
    b = chunk_documents(docs, "c32", spec, TOKENIZER)
    assert a.equals(b)
    assert set(a["doc_id"]) == {"d0"}
    assert a["chunk_id"].to_list() == [f"c32:d0:{i}" for i in range(a.height)]
    assert (a["chunking"] == "c32").all()


def test_unknown_tokenizer_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="unknown tiktoken encoding 'nope_base'"):
        token_counter("nope_base")


def test_tiktoken_runs_offline_from_the_bundled_bpe_file() -> None:
    """The cl100k_base BPE file must come from TIKTOKEN_CACHE_DIR, not the network."""
    import os
    import subprocess
    import sys

    code = (
        "import socket\n"
        "def deny(*a, **k): raise OSError('network disabled in test')\n"
        "socket.socket.connect = deny\n"
        "socket.create_connection = deny\n"
        "from ragcourt.core.offline import apply; apply()\n"
        "from ragcourt.corpus.chunking import token_counter\n"
        "print(token_counter('cl100k_base')('hello world'))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "TIKTOKEN_CACHE_DIR"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "2"
