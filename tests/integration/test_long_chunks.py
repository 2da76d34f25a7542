"""Chunks longer than the embedder's window, with the real MiniLM (256 word pieces): windows
retrieve on a phrase in a chunk's second half where truncation cannot, window labels map back
to chunks without duplicates, and the per-cell strategy reaches the stats file, the report and
a sweep point's summary row."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from ragcourt.core.io import write_parquet
from ragcourt.core.schemas import frame_schema
from ragcourt.orchestration.params import Params, parse_params
from ragcourt.orchestration.sweeps import point_metrics
from ragcourt.reporting.artifacts import Artifacts
from ragcourt.reporting.sections.retrieval_metrics import long_chunks_table
from ragcourt.retrieval import indexing
from ragcourt.retrieval.embedders import encode, load_encoder
from ragcourt.retrieval.long_chunks import best_per_chunk, embed_chunks, read_stats
from ragcourt.retrieval.retrieve import DenseRetriever, open_retriever

MINILM = "all-minilm-l6-v2"
FILLER = (
    "The committee reviewed the municipal tax code, the rules for property assessment, the "
    "schedule of late payment penalties and the appeals process for commercial landlords. "
) * 9
PHRASE = "The lighthouse keeper on Skellig Rock fed seventeen grey seals every Thursday at dawn."
SECOND_HALF = (
    f"{PHRASE} He carried buckets of herring down the stone steps to the landing, and the "
    "seals knew his whistle. Every Thursday the keeper counted the grey seals he had fed "
    "and wrote the number, seventeen, in his logbook."
)
LONG = FILLER + SECOND_HALF  # ~300 word pieces: the phrase starts past piece 256
SHORT = [
    "Harbour seals are common along the rocky coasts of northern Europe.",
    "Lighthouses were automated across Ireland during the twentieth century.",
    "A Thursday market sells fish caught at dawn in the harbour.",
    "The keeper of the county archive catalogues parish records.",
]
QUERY = "Who fed seventeen grey seals every Thursday at dawn?"


def chunks_table(texts: list[str]) -> pl.DataFrame:
    rows = [
        (f"c1:d{i}:0", "c1", f"d{i}", 0, 0, len(t), len(t.split()), t) for i, t in enumerate(texts)
    ]
    return pl.DataFrame(rows, schema=frame_schema("chunks"), orient="row")


def params_with(strategy: str) -> Params:
    return parse_params(
        {
            "chunkings": {"c1": {"size": 512, "overlap": 0}},
            "embedders": {"mini": {"model": MINILM, "long_chunks": strategy}},
            "qagen": {"reference_chunking": "c1"},
        },
        "<test>",
    )


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    write_parquet(chunks_table([LONG, *SHORT]), "data/chunks/c1.parquet", "chunks")
    return tmp_path


def top_chunks(params: Params) -> list[str]:
    indexing.run(params, "c1", "mini")
    retriever = open_retriever("dense", "c1", "mini", params)
    run = retriever.search(pl.DataFrame({"query_id": ["q"], "query": [QUERY]}), 5)
    return list(run["chunk_id"])


def test_the_long_chunk_is_over_the_window_in_word_pieces() -> None:
    enc = load_encoder(MINILM)
    (n,) = enc.token_counts([LONG], "document")
    assert enc.window == 256 < n
    windows = enc.windows(LONG, 32, "document")
    assert len(windows) == 2 and PHRASE not in windows[0] and PHRASE in windows[1]
    assert max(enc.token_counts(windows, "document")) <= enc.window


def test_windows_retrieve_a_second_half_phrase_that_truncation_misses(workdir: Path) -> None:
    assert top_chunks(params_with("windows"))[0] == "c1:d0:0"
    assert top_chunks(params_with("truncate"))[0] != "c1:d0:0"


def test_window_labels_map_back_to_chunks_without_duplicates(workdir: Path) -> None:
    texts = [LONG, FILLER[:400] + SECOND_HALF + " " + FILLER, *SHORT]
    write_parquet(chunks_table(texts), "data/chunks/c1.parquet", "chunks")
    params = params_with("windows")
    indexing.run(params, "c1", "mini")
    retriever = open_retriever("dense", "c1", "mini", params)
    assert isinstance(retriever, DenseRetriever)
    assert retriever.index.ntotal > len(texts)  # several windows share a chunk's label
    run = retriever.search(pl.DataFrame({"query_id": ["q"], "query": [QUERY]}), len(texts))
    ids = run["chunk_id"].to_list()
    assert len(ids) == len(set(ids)) == len(texts)
    # each chunk's score is its best window's cosine, and the ranking follows it
    cv = embed_chunks(MINILM, texts, "windows", 32)
    cos = cv.vectors @ encode(MINILM, [QUERY], role="query")[0]
    best = {f"c1:d{i}:0": float(cos[cv.owners == i].max()) for i in range(len(texts))}
    assert run["score"].to_list() == pytest.approx([best[c] for c in ids], abs=1e-5)
    assert ids == sorted(best, key=lambda c: -best[c])


def test_best_per_chunk_keeps_each_label_once_at_its_best_score() -> None:
    labels = np.array([[3, 3, 1, -1, 2], [0, 0, 0, 0, 0]])
    scores = np.array([[0.9, 0.8, 0.7, 0.0, 0.6], [0.5, 0.4, 0.3, 0.2, 0.1]])
    assert best_per_chunk(labels, scores, 2) == [[(3, 0.9), (1, 0.7)], [(0, 0.5)]]


@pytest.mark.parametrize(
    ("strategy", "handling", "flag"),
    [
        ("windows", "windowed", "would have cut"),
        ("pool", "pooled", "would have cut"),
        ("truncate", "TRUNCATED", "truncated:"),
    ],
)
def test_per_cell_strategy_is_in_the_stats_and_the_report(
    workdir: Path, strategy: str, handling: str, flag: str
) -> None:
    params = params_with(strategy)
    indexing.run(params, "c1", "mini")
    stats = read_stats(indexing.stats_path("c1", "mini"))
    assert (stats.strategy, stats.window, stats.n_chunks, stats.n_over_window) == (
        strategy,
        256,
        5,
        1,
    )
    assert stats.share_over_window == pytest.approx(0.2)
    assert stats.n_vectors == (6 if strategy == "windows" else 5)
    table = long_chunks_table(Artifacts(workdir), params)
    (row,) = table.rows
    assert row[:2] == ["c1", "512"] and row[3] == "256" and row[4] == "1 of 5 (20.0%)"
    assert row[5].startswith(handling) and flag in row[6]
    summary = point_metrics(workdir)  # a sweep point's row
    assert summary["c1/mini/long_chunks"] == handling.lower()
    assert summary["c1/mini/over_window"] == pytest.approx(0.2)
