"""The embed stage in shards (``scale.shard_chunks``), with the real MiniLM: the merged
embeddings table has the unsharded run's bytes (shards are cut on the stream batches, so each
vector comes from the same encode call), the index finds the same chunks, the Prefect flow's
shard listing names only the shards not done, and a resumed run makes only the lost shard."""

from __future__ import annotations

import hashlib
from pathlib import Path

import polars as pl
import pytest

from ragcourt.core.io import write_parquet
from ragcourt.core.schemas import frame_schema
from ragcourt.orchestration.params import Params, parse_params
from ragcourt.retrieval import indexing

MINILM = "all-minilm-l6-v2"
PLACES = ["harbour", "orchard", "railway", "library", "bridge", "mill", "chapel", "market"]
LONG = "The council met in the town hall to discuss the new tax on grain and salt. " * 30
# 17 chunks of different lengths, the first over MiniLM's window (windowed)
TEXTS = [LONG] + [
    f"The {p} of the {n}th ward was {'rebuilt after the flood ' * (k % 3 + 1)}in spring."
    for k, (p, n) in enumerate((p, n) for n in (1, 2) for p in PLACES)
]


def chunks_table(texts: list[str]) -> pl.DataFrame:
    rows = [
        (f"c1:d{i}:0", "c1", f"d{i}", 0, 0, len(t), len(t.split()), t) for i, t in enumerate(texts)
    ]
    return pl.DataFrame(rows, schema=frame_schema("chunks"), orient="row")


def params(shard_chunks: int, stream_chunks: int = 3) -> Params:
    return parse_params(
        {
            "chunkings": {"c1": {"size": 512, "overlap": 0}},
            "embedders": {"mini": {"model": MINILM, "stream_chunks": stream_chunks}},
            "qagen": {"reference_chunking": "c1"},
            "scale": {"shard_chunks": shard_chunks},
        },
        "<test>",
    )


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    write_parquet(chunks_table(TEXTS), "data/chunks/c1.parquet", "chunks")
    return tmp_path


def test_sharded_embeddings_are_the_unsharded_bytes(workdir: Path) -> None:
    emb = indexing.embeddings_path("c1", "mini")
    indexing.run(params(0), "c1", "mini")
    whole, whole_stats = sha(emb), indexing.stats_path("c1", "mini").read_text()
    folder = workdir / "data/embed_shards/c1__mini"
    assert folder.is_dir() and not any(folder.iterdir())  # the output folder, empty
    # 4 chunks a shard rounds up to 6, two stream batches of 3: blocks of 6, 6 and 5 chunks
    assert indexing.shard_chunks(params(4), params(4).embedders["mini"]) == 6
    indexing.run(params(4), "c1", "mini")
    assert sorted(p.name for p in folder.iterdir()) == [
        "00000.parquet", "00001.parquet", "00002.parquet"
    ]  # fmt: skip
    assert sha(emb) == whole
    assert indexing.stats_path("c1", "mini").read_text() == whole_stats
    vectors = pl.read_parquet(emb)
    assert vectors["chunk_id"].n_unique() == len(TEXTS) and vectors.height > len(TEXTS)


def test_the_flow_lists_only_missing_shards_and_a_resume_makes_only_those(
    workdir: Path,
) -> None:
    p = params(4)
    assert [s.label for s in indexing.shards(p, "c1", "mini")] == [
        "c1__mini#0", "c1__mini#1", "c1__mini#2"
    ]  # fmt: skip
    indexing.run(p, "c1", "mini", block=1)  # one shard task, as the flow runs it
    assert [s.label for s in indexing.shards(p, "c1", "mini")] == ["c1__mini#0", "c1__mini#2"]
    indexing.run(p, "c1", "mini")
    folder = workdir / "data/embed_shards/c1__mini"
    before = {f.name: f.stat().st_mtime_ns for f in folder.iterdir()}
    merged = sha(indexing.embeddings_path("c1", "mini"))
    (folder / "00002.parquet").unlink()
    assert [s.label for s in indexing.shards(p, "c1", "mini")] == ["c1__mini#2"]
    indexing.run(p, "c1", "mini")
    after = {f.name: f.stat().st_mtime_ns for f in folder.iterdir()}
    assert {n for n in after if after[n] != before.get(n)} == {"00002.parquet"}
    assert sha(indexing.embeddings_path("c1", "mini")) == merged
    # another embedder setting is another key: every shard is made again (blocks of 4 now)
    other = parse_params(
        {**p.model_dump(mode="json"), "embedders": {"mini": {"model": MINILM, "stream_chunks": 2}}},
        "<test>",
    )
    assert len(indexing.shards(other, "c1", "mini")) == 5
