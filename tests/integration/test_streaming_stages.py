"""Ingest and chunk stream their tables a batch at a time: the files they write hold the rows
(and values) of the whole-table pass, whatever the batch size."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow.parquet as pq  # type: ignore[import-untyped]
import pytest

from ragcourt.core import catalog
from ragcourt.core.errors import RagcourtError
from ragcourt.core.io import read_table
from ragcourt.corpus import chunking, ingest
from ragcourt.orchestration.params import Params, parse_params

ROOT = Path(__file__).resolve().parents[2]


def params_for(corpus: Path) -> Params:
    return parse_params(
        {
            "corpus": {"dir": str(corpus)},
            "chunkings": {"c64": {"size": 64, "overlap": 8}},
            "embedders": {"mini": {"model": "all-minilm-l6-v2"}},
            "qagen": {"reference_chunking": "c64"},
        },
        "<test>",
    )


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for src in sorted((ROOT / "data/corpus").glob("*.txt"))[:4]:
        shutil.copy(src, corpus / src.name)
    shutil.copy(corpus / "1790_george_washington_n.txt", corpus / "copy_of_1790.txt")
    (corpus / "empty.txt").write_text("", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize(("batch", "chars"), [(1, 10**9), (2, 10**9), (256, 10**9), (256, 1)])
def test_streamed_ingest_and_chunk_write_the_rows_of_the_whole_pass(
    project: Path, monkeypatch: pytest.MonkeyPatch, batch: int, chars: int
) -> None:
    params = params_for(project / "corpus")
    monkeypatch.setattr(ingest, "DOCUMENT_BATCH", batch)
    monkeypatch.setattr(chunking, "DOCUMENT_BATCH", batch)
    monkeypatch.setattr(ingest, "BATCH_CHARS", chars)
    monkeypatch.setattr(chunking, "BATCH_CHARS", chars)
    whole_docs, whole_rejected = ingest.ingest(params.corpus)
    ingest.run(params)
    docs = read_table(catalog.path("documents"), "documents")
    assert docs.equals(whole_docs.select(docs.columns))
    assert docs.height == 5 and docs["duplicate_of"].is_not_null().sum() == 1
    rejected = read_table(catalog.path("rejected_documents"), "rejected_documents")
    assert rejected.equals(whole_rejected) and rejected.height == 1
    whole_chunks, _ = chunking.chunk_table(
        whole_docs, "c64", params.chunkings["c64"], params.chunk_tokenizer
    )
    chunking.run(params, "c64")
    chunks = read_table(catalog.path("chunks", chunking="c64"), "chunks")
    assert chunks.equals(whole_chunks.select(chunks.columns))
    assert chunks["doc_id"].n_unique() == 4  # the duplicate is not chunked
    if chars == 1:  # the text budget cuts a row group after every document, however many fit
        groups = pq.ParquetFile(catalog.path("chunks", chunking="c64")).metadata.num_row_groups
        assert pq.ParquetFile(catalog.path("documents")).metadata.num_row_groups == docs.height
        assert groups == 4


def test_an_empty_corpus_is_one_line_and_writes_nothing(project: Path) -> None:
    for f in (project / "corpus").glob("*.txt"):
        if f.name != "empty.txt":
            f.unlink()
    with pytest.raises(RagcourtError, match="no usable documents") as err:
        ingest.run(params_for(project / "corpus"))
    assert "\n" not in str(err.value)
    assert not catalog.path("documents").exists()
