"""The dense index through FAISS's index_factory, with real FAISS and the real MiniLM: the
factory string is honoured, ``auto`` switches at its threshold, recall@10 is recorded, windowed
chunks map back to chunk ids under an approximate index, a bad string is one line naming the
key, and the streamed embed stage writes the rows the whole-table path writes."""

from __future__ import annotations

from pathlib import Path

import faiss
import numpy as np
import polars as pl
import pytest

from ragcourt.core.errors import ConfigError
from ragcourt.core.io import read_table, write_parquet
from ragcourt.core.schemas import frame_schema
from ragcourt.orchestration.params import Params, parse_params
from ragcourt.reporting.artifacts import Artifacts
from ragcourt.reporting.sections.retrieval_metrics import index_table
from ragcourt.retrieval import indexing
from ragcourt.retrieval.long_chunks import read_stats
from ragcourt.retrieval.params import EmbedderSpec
from ragcourt.retrieval.retrieve import DenseRetriever, open_retriever
from ragcourt.retrieval.vector_index import (
    exact_top,
    inner_index,
    new_index,
    recall_at,
    resolve_factory,
)

MINILM = "all-minilm-l6-v2"
TOPICS = [
    "The harbour master logged every fishing boat that entered the bay at dawn.",
    "Congress debated the tariff on imported steel for three weeks.",
    "The orchard's apple harvest was the largest in a decade.",
    "A new railway line linked the mining towns to the coast.",
    "The school board voted to extend the library's opening hours.",
    "Volunteers planted four hundred oak trees along the river.",
    "The treaty ended a long dispute over fishing rights in the north sea.",
    "Engineers inspected the old bridge after the spring floods.",
]
LONG = (
    "The committee reviewed the municipal tax code and the appeals process for landlords. "
    * 20
    + "The lighthouse keeper on Skellig Rock fed seventeen grey seals every Thursday at dawn. "
    "He carried buckets of herring down the stone steps to the landing, and the seals knew his "
    "whistle. Every Thursday the keeper counted the grey seals he had fed and wrote the number, "
    "seventeen, in his logbook."
)


def chunks_table(texts: list[str]) -> pl.DataFrame:
    rows = [
        (f"c1:d{i}:0", "c1", f"d{i}", 0, 0, len(t), len(t.split()), t) for i, t in enumerate(texts)
    ]
    return pl.DataFrame(rows, schema=frame_schema("chunks"), orient="row")


def params_with(**embedder: object) -> Params:
    return parse_params(
        {
            "chunkings": {"c1": {"size": 512, "overlap": 0}},
            "embedders": {"mini": {"model": MINILM, **embedder}},
            "qagen": {"reference_chunking": "c1"},
        },
        "<test>",
    )


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    write_parquet(chunks_table([LONG, *TOPICS]), "data/chunks/c1.parquet", "chunks")
    return tmp_path


def index_stats() -> dict[str, object]:
    (row,) = read_table(indexing.index_stats_path("c1", "mini"), "index_stats").to_dicts()
    return row


@pytest.mark.parametrize(
    ("factory", "inner"),
    [
        ("Flat", faiss.IndexFlatIP),
        ("HNSW16", faiss.IndexHNSWFlat),
        ("IVF2,Flat", faiss.IndexIVFFlat),
    ],
)
def test_the_factory_string_is_built_with_inner_product(
    workdir: Path, factory: str, inner: type
) -> None:
    params = params_with(index=factory, nprobe=2)
    indexing.run(params, "c1", "mini")
    index = faiss.read_index(str(indexing.index_path("c1", "mini")))
    assert isinstance(inner_index(index), inner)
    assert index.metric_type == faiss.METRIC_INNER_PRODUCT
    stats = index_stats()
    assert (stats["requested"], stats["factory"], stats["metric"]) == (
        factory,
        factory,
        "inner_product",
    )
    assert stats["n_vectors"] == index.ntotal == 10  # the long chunk is two windows
    assert stats["index_bytes"] == indexing.index_path("c1", "mini").stat().st_size
    retriever = open_retriever("dense", "c1", "mini", params)
    assert isinstance(retriever, DenseRetriever)
    if factory == "IVF2,Flat":
        assert faiss.extract_index_ivf(inner_index(retriever.index)).nprobe == 2


@pytest.mark.parametrize(("flat_max", "built"), [(10, "Flat"), (9, "HNSW32")])
def test_auto_is_flat_up_to_its_threshold_then_hnsw(
    workdir: Path, flat_max: int, built: str
) -> None:
    indexing.run(params_with(index_flat_max=flat_max), "c1", "mini")
    stats = index_stats()
    assert (stats["requested"], stats["factory"]) == ("auto", built)
    spec = EmbedderSpec(model=MINILM, index_flat_max=flat_max)
    assert resolve_factory(spec, 10) == built


def test_recall_at_10_against_exact_search_is_recorded(workdir: Path) -> None:
    indexing.run(params_with(index="HNSW16", index_recall_queries=5), "c1", "mini")
    stats = index_stats()
    assert stats["recall_queries"] == 5
    assert stats["recall_at_10"] == 1.0  # 9 chunks: the top 10 is every chunk
    indexing.run(params_with(index="Flat"), "c1", "mini")
    assert (index_stats()["recall_at_10"], index_stats()["recall_queries"]) == (1.0, 0)


def test_recall_counts_the_exact_top_10_chunks_an_index_misses() -> None:
    rng = np.random.default_rng(0)
    vecs = rng.standard_normal((400, 16)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    labels = np.arange(400, dtype=np.int64)
    queries = vecs[:20]
    truth = exact_top(queries, iter([(vecs[:150], labels[:150]), (vecs[150:], labels[150:])]), 10)
    flat = new_index("Flat", 16, "k")
    flat.add_with_ids(vecs, labels)
    assert recall_at(flat, queries, truth, 10) == 1.0
    half = new_index("Flat", 16, "k")  # an index holding only every other vector
    half.add_with_ids(vecs[::2], labels[::2])
    want = np.mean([len(set(t[:10].tolist()) & set(labels[::2].tolist())) / 10 for t in truth[1]])
    assert recall_at(half, queries, truth, 10) == pytest.approx(want)
    assert 0.3 < want < 0.8


def test_windows_map_back_to_chunk_ids_under_an_approximate_index(workdir: Path) -> None:
    params = params_with(index="HNSW16")
    indexing.run(params, "c1", "mini")
    retriever = open_retriever("dense", "c1", "mini", params)
    assert isinstance(retriever, DenseRetriever) and retriever.max_vectors == 2
    query = "Who fed seventeen grey seals every Thursday at dawn?"
    run = retriever.search(pl.DataFrame({"query_id": ["q"], "query": [query]}), 9)
    ids = run["chunk_id"].to_list()
    assert ids[0] == "c1:d0:0"
    assert len(ids) == len(set(ids)) == 9  # each chunk once, though it has two windows
    flat = params_with(index="Flat")
    indexing.run(flat, "c1", "mini")
    exact = open_retriever("dense", "c1", "mini", flat)
    assert (
        exact.search(pl.DataFrame({"query_id": ["q"], "query": [query]}), 9)["chunk_id"].to_list()
        == ids
    )


@pytest.mark.parametrize("bad", ["HNSWx", "IVF4096,PQ33", "IDMap,Flat"])
def test_a_bad_factory_string_is_one_line_naming_the_key(workdir: Path, bad: str) -> None:
    with pytest.raises(ConfigError) as err:
        indexing.run(params_with(index=bad), "c1", "mini")
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith("embedders.mini.index: ") and bad in msg
    assert not indexing.embeddings_path("c1", "mini").exists()  # failed before embedding


def test_streamed_batches_write_the_rows_of_the_whole_table(workdir: Path) -> None:
    chunks = read_table("data/chunks/c1.parquet", "chunks")
    spec = EmbedderSpec(model=MINILM)
    whole, owners, _ = indexing.embed_chunks(chunks, spec, "c1", "mini")
    indexing.run(params_with(stream_chunks=2), "c1", "mini")
    streamed = read_table(indexing.embeddings_path("c1", "mini"), "embeddings")
    assert streamed["chunk_id"].to_list() == whole["chunk_id"].to_list()
    np.testing.assert_allclose(indexing.vectors_of(streamed), indexing.vectors_of(whole), atol=1e-5)
    index = faiss.read_index(str(indexing.index_path("c1", "mini")))
    stored = faiss.vector_to_array(index.id_map)  # type: ignore[attr-defined]
    assert stored.tolist() == owners.tolist()  # windows share their chunk's ordinal
    long = read_stats(indexing.stats_path("c1", "mini"))  # merged over the 5 batches
    assert (long.n_chunks, long.n_over_window, long.n_vectors) == (9, 1, 10)


def test_the_report_shows_the_index_its_recall_and_its_search_setting(workdir: Path) -> None:
    params = params_with(index="HNSW16", ef_search=40, index_recall_queries=4)
    indexing.run(params, "c1", "mini")
    table = index_table(Artifacts(workdir), params)
    (row,) = table.rows
    assert row[:4] == ["c1", "mini", "HNSW16 (HNSW16)", "10"]
    assert row[6] == "1.0000 on 4 stored vectors as queries" and row[7] == "efSearch 40"
