"""The ``bm25`` stage's saved index: bm25s' own save memory-mapped on open gives the scores
of the index built in memory, and a save from other settings or another chunks file is not
used."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from ragcourt.core.io import write_parquet
from ragcourt.core.schemas import frame_schema
from ragcourt.orchestration.params import Params, parse_params
from ragcourt.retrieval import bm25_index
from ragcourt.retrieval.retrieve import BM25Retriever, bm25_dir, open_bm25

TEXTS = [
    "The harbour master logged every fishing boat that entered the bay at dawn.",
    "Congress debated the tariff on imported steel for three weeks.",
    "The orchard's apple harvest was the largest in a decade.",
    "A new railway line linked the mining towns to the coast and the harbour.",
    "The school board voted to extend the library's opening hours.",
    "Volunteers planted four hundred oak trees along the river bank.",
    "The treaty ended a long dispute over fishing rights in the north sea.",
    "Engineers inspected the old railway bridge after the spring floods.",
]
QUERIES = pl.DataFrame(
    {
        "query_id": ["q1", "q2", "q3", "q4"],
        "query": [
            "fishing boats in the harbour",
            "railway bridge floods",
            "steel tariff debate in Congress",
            "zebra",
        ],
    }
)


def chunks_table(texts: list[str]) -> pl.DataFrame:
    rows = [
        (f"c1:d{i}:0", "c1", f"d{i}", 0, 0, len(t), len(t.split()), t) for i, t in enumerate(texts)
    ]
    return pl.DataFrame(rows, schema=frame_schema("chunks"), orient="row")


def params_with(**bm25: object) -> Params:
    return parse_params(
        {
            "chunkings": {"c1": {"size": 512, "overlap": 0}},
            "embedders": {"mini": {"model": "all-minilm-l6-v2"}},
            "qagen": {"reference_chunking": "c1"},
            "retrieval": {"bm25": bm25},
        },
        "<test>",
    )


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    write_parquet(chunks_table(TEXTS), "data/chunks/c1.parquet", "chunks")
    return tmp_path


@pytest.mark.parametrize("method", ["lucene", "bm25+"])
def test_the_memory_mapped_index_gives_the_scores_of_the_in_memory_one(
    workdir: Path, method: str
) -> None:
    params = params_with(method=method)
    in_memory = open_bm25("c1", params)  # nothing saved yet: built from the chunks
    assert in_memory.texts == TEXTS
    bm25_index.run(params, "c1")
    assert (bm25_dir("c1") / "data.csc.index.npy").is_file()
    saved = open_bm25("c1", params)
    assert saved is not in_memory and saved.texts == []  # loaded, not rebuilt
    assert isinstance(saved.model.scores["data"], np.memmap)
    assert saved.corpus_languages == in_memory.corpus_languages == ["en"]
    want = in_memory.search(QUERIES, 5)
    got = saved.search(QUERIES, 5)
    assert got.equals(want)
    assert set(got["query_id"]) == {"q1", "q2", "q3"}  # no term in common: no hit


def test_a_save_from_other_settings_or_chunks_is_not_used(workdir: Path) -> None:
    bm25_index.run(params_with(k1=1.2), "c1")
    other = open_bm25("c1", params_with(k1=1.5))
    assert other.texts == TEXTS  # built in memory
    assert isinstance(open_bm25("c1", params_with(k1=1.2)), BM25Retriever)
    assert open_bm25("c1", params_with(k1=1.2)).texts == []
    write_parquet(chunks_table(TEXTS[:5]), "data/chunks/c1.parquet", "chunks")
    fresh = open_bm25("c1", params_with(k1=1.2))
    assert fresh.texts == TEXTS[:5] and len(fresh.chunk_ids) == 5
