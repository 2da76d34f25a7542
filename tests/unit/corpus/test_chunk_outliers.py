"""Outlier chunk counts: long whitespace-free runs and chunk-count blow-ups are warned about."""

from __future__ import annotations

import logging
import random

import polars as pl
import pytest

from ragcourt.core.schemas import frame_schema
from ragcourt.corpus.chunk_outliers import expected_chunks, longest_unbroken_run
from ragcourt.corpus.chunking import chunk_table
from ragcourt.corpus.params import ChunkSpec

PROSE = " ".join(
    f"Sentence {i} says the tariff on wool rose by {i % 7} percent in that year." for i in range(80)
)


def docs(texts: dict[str, str]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "doc_id": list(texts),
            "path": [f"corpus/{d}.txt" for d in texts],
            "title": ["t"] * len(texts),
            "format": ["text"] * len(texts),
            "text": list(texts.values()),
            "n_chars": [len(t) for t in texts.values()],
            "duplicate_of": [None] * len(texts),
            "language": ["en"] * len(texts),
            "language_confidence": [1.0] * len(texts),
        },
        schema=frame_schema("documents"),
    )


def test_single_token_run_is_an_outlier_and_prose_is_not(
    caplog: pytest.LogCaptureFixture,
) -> None:
    spec = ChunkSpec(size=32, overlap=4)
    with caplog.at_level(logging.WARNING, logger="ragcourt.chunk"):
        chunks, outliers = chunk_table(
            docs({"prose": PROSE, "blob": "a" * 6000}), "c32", spec, "cl100k_base"
        )
    assert [o.doc_id for o in outliers] == ["blob"]
    blob = outliers[0]
    n_blob = chunks.filter(pl.col("doc_id") == "blob").height
    assert blob.n_chunks == n_blob and blob.n_chars == 6000
    assert blob.longest_unbroken_run == 6000
    assert blob.n_chunks > 2 * blob.expected_chunks  # ~8 'a' per token, cut per character
    assert len(blob.reasons) == 2
    lines = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(lines) == 1 and "\n" not in lines[0]
    assert "document blob (corpus/blob.txt)" in lines[0]
    assert f"made {n_blob} chunks, expected ~{blob.expected_chunks}" in lines[0]


def test_random_unbroken_run_is_flagged_by_its_length_alone() -> None:
    rng = random.Random(0)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    b64 = "".join(rng.choice(alphabet) for _ in range(3000))
    _, outliers = chunk_table(
        docs({"b64": f"Image data follows. {b64} End."}),
        "c64",
        ChunkSpec(size=64, overlap=8),
        "cl100k_base",
    )
    assert len(outliers) == 1
    assert outliers[0].reasons == [
        "a 3000-char run without whitespace is cut character by character"
    ]


def test_long_prose_and_a_short_unbroken_run_are_not_outliers() -> None:
    url = "https://example.org/" + "x" * 200  # 220 chars: below 8 x 32 = 256
    _, outliers = chunk_table(
        docs({"prose": PROSE * 3, "url": f"See {url} for {PROSE}"}),
        "c32",
        ChunkSpec(size=32, overlap=4),
        "cl100k_base",
    )
    assert outliers == []


def test_expected_chunks_and_longest_run_formulas() -> None:
    spec = ChunkSpec(size=256, overlap=32)
    assert expected_chunks(0, spec) == 1
    assert expected_chunks(256, spec) == 1
    assert expected_chunks(257, spec) == 2
    assert expected_chunks(32 + 224 * 10, spec) == 10
    assert longest_unbroken_run("ab  cdef\tg") == 4
    assert longest_unbroken_run("   ") == 0
