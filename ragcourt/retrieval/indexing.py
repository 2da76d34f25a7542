"""Embed stage: chunks of one chunking -> embeddings Parquet + FAISS index, per embedder.

Streaming: the chunks table is read ``embedders.<e>.stream_chunks`` chunks at a time, each
batch embedded and appended to the embeddings table, so memory holds one batch (plus the index)
whatever the corpus size. Vectors come from
:func:`ragcourt.retrieval.long_chunks.embed_chunks` (float32, L2-normalised). A chunk longer
than the model's window, counted in the model's own tokens, is embedded per
``embedders.<e>.long_chunks``: ``windows`` (one vector per overlapping window), ``pool``
(their mean) or ``truncate`` (its first window). Outputs, written atomically:

* ``data/embeddings/<chunking>__<embedder>.parquet`` (table ``embeddings``): ``chunk_id`` and
  ``embedding`` as a fixed-size ``Array(Float32, dim)``, one row per vector in chunk order (a
  windowed chunk has several consecutive rows with its chunk_id).
* ``data/index/<chunking>__<embedder>.faiss``: an ``IndexIDMap`` over the index of
  ``embedders.<e>.index`` (:mod:`ragcourt.retrieval.vector_index`; ``IndexFlatIP`` up to
  ``index_flat_max`` vectors under ``auto``), built from the embeddings table in a second
  streamed pass, each vector labelled with its chunk's ordinal (position among the distinct
  chunk_ids of the embeddings table); inner product of unit vectors is cosine.
* ``data/index/<chunking>__<embedder>.stats.parquet`` (table ``index_stats``): the factory
  string built, build time, index bytes, recall@10 against exact search.
* ``data/index/<chunking>__<embedder>.json``: :class:`~ragcourt.retrieval.long_chunks.\
LongChunkStats` (window, chunks over it, strategy, vectors), shown by the report.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from ragcourt.core import catalog
from ragcourt.core.allocator import release_free_memory
from ragcourt.core.errors import ConfigError, RagcourtError
from ragcourt.core.io import read_table, write_parquet, write_with
from ragcourt.core.parquet_stream import BatchWriter, read_batches
from ragcourt.core.shards import (
    META_KEY,
    Shard,
    blocks,
    is_done,
    prune,
    rows_digest,
    shard_file,
    shard_key,
)
from ragcourt.retrieval.long_chunks import LongChunkStats
from ragcourt.retrieval.params import EmbedderSpec, RetrievalView
from ragcourt.retrieval.vector_index import (
    FLAT,
    RECALL_K,
    TRAIN_SAMPLE,
    IndexStats,
    check_factory,
    configure_search,
    exact_top,
    has_hnsw,
    new_index,
    one_thread_if,
    recall_at,
    resolve_factory,
)

if TYPE_CHECKING:
    import faiss

log = logging.getLogger("ragcourt.embed")


def embeddings_path(chunking: str, embedder: str) -> Path:
    return catalog.path("embeddings", chunking=chunking, embedder=embedder)


def index_path(chunking: str, embedder: str) -> Path:
    return catalog.path("index", chunking=chunking, embedder=embedder)


def stats_path(chunking: str, embedder: str) -> Path:
    return catalog.path("embed_stats", chunking=chunking, embedder=embedder)


def index_stats_path(chunking: str, embedder: str) -> Path:
    return catalog.path("index_stats", chunking=chunking, embedder=embedder)


def embeddings_frame(chunk_ids: list[str], vectors: np.ndarray) -> pl.DataFrame:
    """Table ``embeddings``: chunk_id + fixed-size float32 array column."""
    dim = int(vectors.shape[1])
    emb = pl.Series(
        "embedding", vectors.astype(np.float32, copy=False), dtype=pl.Array(pl.Float32, dim)
    )
    return pl.DataFrame({"chunk_id": pl.Series(chunk_ids, dtype=pl.String), "embedding": emb})


def vectors_of(embeddings: pl.DataFrame) -> np.ndarray:
    """The ``embedding`` column as a C-contiguous float32 (n, dim) matrix."""
    return np.ascontiguousarray(embeddings["embedding"].to_numpy(), dtype=np.float32)


def build_index(vectors: np.ndarray, labels: np.ndarray | None = None) -> faiss.IndexIDMap:
    """An exact inner-product index over ``vectors``; vector ``i`` carries label ``labels[i]``
    (default ``i``), its chunk's ordinal, so several windows may share a label."""
    import faiss

    vecs = np.ascontiguousarray(vectors, dtype=np.float32)
    ids = np.arange(len(vecs), dtype=np.int64) if labels is None else labels.astype(np.int64)
    if len(ids) != len(vecs):
        raise ValueError(f"build_index: {len(vecs)} vectors but {len(ids)} labels")
    index = faiss.IndexIDMap(faiss.IndexFlatIP(int(vecs.shape[1])))
    index.add_with_ids(vecs, ids)
    return index


def embed_chunks(
    chunks: pl.DataFrame, spec: EmbedderSpec, chunking: str = "", embedder: str = ""
) -> tuple[pl.DataFrame, np.ndarray, LongChunkStats]:
    """Embed every chunk text with ``spec`` (long chunks per ``spec.long_chunks``): the
    embeddings table, each row's chunk ordinal, and what happened to long chunks."""
    from ragcourt.retrieval.long_chunks import embed_chunks as embed_texts

    texts = chunks["text"].to_list()
    cv = embed_texts(
        spec.model, texts, spec.long_chunks, spec.window_overlap, spec.batch_size, True
    )
    ids = chunks["chunk_id"].to_list()
    owners = cv.owners
    per_chunk = np.bincount(owners, minlength=len(texts)) if len(owners) else np.zeros(1, int)
    stats = LongChunkStats(
        chunking=chunking,
        embedder=embedder,
        model=spec.model,
        strategy=spec.long_chunks,
        window=cv.window,
        overlap=spec.window_overlap,
        n_chunks=len(texts),
        n_over_window=cv.n_over_window,
        max_tokens=max(cv.token_counts, default=0),
        n_vectors=len(owners),
        max_vectors_per_chunk=int(per_chunk.max()),
    )
    frame = embeddings_frame([ids[i] for i in owners.tolist()], cv.vectors)
    return frame, owners, stats


def unfit_languages(model: str, languages: list[str]) -> list[str]:
    """Corpus languages (``und`` ignored) outside registry embedder ``model``'s ``languages``
    (``[]`` when the registry gives none: multilingual or not stated)."""
    from ragcourt.retrieval.embedders import registry_entry

    known = registry_entry(model).languages
    if known is None:
        return []
    return sorted({lang for lang in languages if lang != "und" and lang not in known})


def registry_languages(model: str) -> list[str]:
    from ragcourt.retrieval.embedders import registry_entry

    return registry_entry(model).languages or []


def warn_language_fit(model: str) -> list[str]:
    """Log a warning when the documents table holds languages ``model`` was not trained on."""
    docs_path = catalog.path("documents")
    if not docs_path.is_file():
        return []
    langs = read_table(docs_path, "documents", columns=["language"])["language"].to_list()
    unfit = unfit_languages(model, [str(x) for x in langs if x is not None])
    if unfit:
        n = sum(1 for x in langs if x in unfit)
        log.warning(
            "embed: %d documents are in %s but embedder '%s' covers only %s (registry "
            "languages); dense retrieval on them will be poor - rely on BM25 or register a "
            "multilingual embedder in configs/models.yaml",
            n, ", ".join(unfit), model, ", ".join(registry_languages(model)),
        )  # fmt: skip
    return unfit


def chunk_batches(src: Path, size: int) -> Iterator[pl.DataFrame]:
    """The chunks table ``src`` (schema checked) as consecutive frames of ``size`` rows,
    columns chunk_id and text; read batch by batch, never whole."""
    return read_batches(src, "chunks", size, columns=["chunk_id", "text"])


def vector_batches(path: Path, size: int = 8_192) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The embeddings table ``path`` as ``(vectors, labels)`` batches of ``size`` rows; a
    row's label is its chunk's ordinal (consecutive rows of one chunk_id share it)."""
    prev: str | None = None
    last = -1
    for frame in read_batches(path, "embeddings", size):
        ids = frame["chunk_id"]
        new = ids.ne_missing(ids.shift(1)).to_numpy().astype(np.int64)
        new[0] = int(ids[0] != prev)
        labels = last + np.cumsum(new)
        prev, last = ids[-1], int(labels[-1])
        yield vectors_of(frame), labels


def gather_rows(path: Path, positions: list[np.ndarray]) -> list[np.ndarray]:
    """For each sorted array of row positions, those rows' vectors from the embeddings table
    ``path`` (one streamed pass)."""
    out: list[list[np.ndarray]] = [[] for _ in positions]
    start = 0
    for vecs, _ in vector_batches(path):
        end = start + len(vecs)
        for i, pos in enumerate(positions):
            pick = pos[(pos >= start) & (pos < end)] - start
            if len(pick):
                out[i].append(vecs[pick])
        start = end
    dim = 0 if start == 0 else vecs.shape[1]
    return [np.concatenate(p) if p else np.zeros((0, dim), np.float32) for p in out]


def merge_stats(a: LongChunkStats | None, b: LongChunkStats) -> LongChunkStats:
    """Long-chunk stats of two consecutive batches of one chunks table."""
    if a is None:
        return b
    return replace(
        a,
        n_chunks=a.n_chunks + b.n_chunks,
        n_over_window=a.n_over_window + b.n_over_window,
        max_tokens=max(a.max_tokens, b.max_tokens),
        n_vectors=a.n_vectors + b.n_vectors,
        max_vectors_per_chunk=max(a.max_vectors_per_chunk, b.max_vectors_per_chunk),
    )


def embed_stream(
    src: Path, spec: EmbedderSpec, out: Path, chunking: str, embedder: str
) -> LongChunkStats:
    """Embed the chunks table ``src`` ``spec.stream_chunks`` chunks at a time, appending each
    batch's rows to table ``embeddings`` at ``out``: memory holds one batch, whatever the
    corpus size."""
    stats: LongChunkStats | None = None
    with BatchWriter(out, "embeddings") as writer:
        for batch in chunk_batches(src, spec.stream_chunks):
            frame, _, st = embed_chunks(batch, spec, chunking, embedder)
            writer.write(frame)
            stats = merge_stats(stats, st)
            release_free_memory()  # the batch's freed tensors: not kept resident
    if stats is None:
        raise RagcourtError(f"{src}: no chunks to embed")
    return stats


def build_streamed(
    emb: Path, spec: EmbedderSpec, long: LongChunkStats, dim: int, key: str
) -> tuple[faiss.Index, float, float, int]:
    """The index of table ``emb`` (module :mod:`~ragcourt.retrieval.vector_index`): the index
    (search settings applied), build seconds, recall@10 vs exact and the queries it took."""
    n = long.n_vectors
    factory = resolve_factory(spec, n)
    rng = np.random.default_rng(spec.index_seed)
    t0 = time.perf_counter()
    index = new_index(factory, dim, key)
    exact = factory == FLAT
    n_train = 0 if index.is_trained else min(n, TRAIN_SAMPLE)
    n_query = 0 if exact else min(n, spec.index_recall_queries)
    train_pos = np.sort(rng.choice(n, size=n_train, replace=False))
    query_pos = np.sort(rng.choice(n, size=n_query, replace=False))
    train, queries = gather_rows(emb, [train_pos, query_pos])
    if n_train:
        index.train(train)
    del train
    with one_thread_if(has_hnsw(index)):
        for vecs, labels in vector_batches(emb):
            index.add_with_ids(vecs, labels)
    build_s = time.perf_counter() - t0
    configure_search(index, spec)
    if not n_query:
        return index, build_s, 1.0, 0
    depth = RECALL_K * long.max_vectors_per_chunk
    truth = exact_top(queries, vector_batches(emb), depth)
    return index, build_s, recall_at(index, queries, truth, depth), n_query


def warn_long_chunks(stats: LongChunkStats, spec: EmbedderSpec) -> None:
    if stats.n_over_window:
        log.warning(
            "embed: %d of %d chunks exceed %s's window of %d tokens (its own word pieces; "
            "longest %d): %s (long_chunks: %s, %d vectors)",
            stats.n_over_window, stats.n_chunks, spec.model, stats.window, stats.max_tokens,
            stats.handling, spec.long_chunks, stats.n_vectors,
        )  # fmt: skip


STATS_KEY = "ragcourt.long_chunk_stats"  # a shard file's LongChunkStats (JSON, footer)
#: the embedder settings a vector depends on (a shard made with others is made again)
VECTOR_FIELDS = {"model", "batch_size", "long_chunks", "window_overlap", "stream_chunks"}


def shard_chunks(params: RetrievalView, spec: EmbedderSpec) -> int:
    """Chunks per embed shard: ``scale.shard_chunks`` rounded up to a multiple of
    ``spec.stream_chunks``, so a shard embeds exactly the unsharded run's batches (the same
    vectors, to the bit); 0: not sharded."""
    size, step = params.scale.shard_chunks, spec.stream_chunks
    return 0 if size <= 0 else -(-size // step) * step


Part = tuple[Path, int, int]  # a shard's file, first row and end row in the chunks table


def _block(spec: EmbedderSpec, src: Path, part: Part) -> tuple[pl.DataFrame, str]:
    """A shard's chunk rows and its key (the embedder settings its vectors depend on, the
    rows, the code)."""
    _, lo, hi = part
    rows = pl.scan_parquet(src).select("chunk_id", "text").slice(lo, hi - lo).collect()
    record = {"embedder": spec.model_dump(include=VECTOR_FIELDS), "rows": rows_digest(rows)}
    return rows, shard_key(record)


def _shard_plan(params: RetrievalView, chunking: str, embedder: str) -> list[Part]:
    """Every embed shard of the cell, from the chunks table's row count alone (none:
    unsharded)."""
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    spec = _check_cell(params, chunking, embedder)
    size = shard_chunks(params, spec)
    src = catalog.path("chunks", chunking=chunking)
    if size == 0:
        return []
    if not src.is_file():
        raise RagcourtError(f"{src}: input artifact not found (run the chunk stage)")
    folder = catalog.path("embed_shards", chunking=chunking, embedder=embedder)
    n = pq.ParquetFile(src).metadata.num_rows
    return [(shard_file(folder, b), lo, hi) for b, (lo, hi) in enumerate(blocks(n, size))]


def shards(params: RetrievalView, chunking: str, embedder: str) -> list[Shard]:
    """The embed shards of the cell that are not done (the Prefect flow runs each as a task:
    ``run(params, chunking, embedder, block=b)``); none when unsharded."""
    spec, src = params.embedders[embedder], catalog.path("chunks", chunking=chunking)
    return [
        Shard((("block", b),), (part[0].as_posix(),), f"{chunking}__{embedder}#{b}")
        for b, part in enumerate(_shard_plan(params, chunking, embedder))
        if not is_done(part[0], _block(spec, src, part)[1])
    ]


def embed_shard(spec: EmbedderSpec, src: Path, part: Part, chunking: str, embedder: str) -> None:
    """Embed one block of the chunks table into its shard file unless it is done: one row
    group per stream batch (as the unsharded table has them), its key and long-chunk stats
    in the footer."""
    path = part[0]
    rows, key = _block(spec, src, part)
    if is_done(path, key):
        return

    def write(tmp: Path) -> None:
        stats: LongChunkStats | None = None
        with BatchWriter(tmp, "embeddings") as writer:
            for start in range(0, rows.height, spec.stream_chunks):
                batch = rows.slice(start, spec.stream_chunks)
                frame, _, st = embed_chunks(batch, spec, chunking, embedder)
                writer.write(frame)
                stats = merge_stats(stats, st)
                release_free_memory()
            assert stats is not None
            writer.metadata = {META_KEY: key, STATS_KEY: json.dumps(stats.to_json())}

    write_with(path, write, durable=True)


def merge_shards(parts: list[Part], out: Path) -> LongChunkStats:
    """The shard files' row groups appended in block order to table ``embeddings`` at ``out``
    (the unsharded run's row groups, byte for byte), and their long-chunk stats merged."""
    import pyarrow.parquet as pq

    stats: LongChunkStats | None = None
    with BatchWriter(out, "embeddings") as writer:
        for path, _, _ in parts:
            shard = pq.ParquetFile(path)
            for g in range(shard.num_row_groups):
                frame = pl.from_arrow(shard.read_row_group(g))
                assert isinstance(frame, pl.DataFrame)
                writer.write(frame)
            meta = pl.read_parquet_metadata(path)
            stats = merge_stats(stats, LongChunkStats.from_json(json.loads(meta[STATS_KEY])))
    if stats is None:
        raise RagcourtError(f"{out}: no chunks to embed")
    prune(parts[0][0].parent, [p for p, _, _ in parts])
    return stats


def _check_cell(params: RetrievalView, chunking: str, embedder: str) -> EmbedderSpec:
    if chunking not in params.chunkings:
        raise ConfigError(
            f"chunking '{chunking}' is not one of chunkings {sorted(params.chunkings)}"
        )
    if embedder not in params.embedders:
        raise ConfigError(
            f"embedder '{embedder}' is not one of embedders {sorted(params.embedders)}"
        )
    return params.embedders[embedder]


def _embed_shards(
    params: RetrievalView, chunking: str, embedder: str, block: int | None = None
) -> list[Part]:
    """Make the cell's shards that are not done (only ``block`` with it); returns the plan.
    Unsharded: the (empty) shard folder, an output, is made and emptied."""
    spec, src = params.embedders[embedder], catalog.path("chunks", chunking=chunking)
    plan = _shard_plan(params, chunking, embedder)
    if not plan:
        folder = catalog.path("embed_shards", chunking=chunking, embedder=embedder)
        folder.mkdir(parents=True, exist_ok=True)
        prune(folder, [])
    for part in plan if block is None else plan[block : block + 1]:
        embed_shard(spec, src, part, chunking, embedder)
    return plan


def run(
    params: RetrievalView, chunking: str, embedder: str, block: int | None = None
) -> tuple[Path, Path]:
    """Embed data/chunks/<chunking>.parquet with ``embedders[embedder]`` batch by batch (or
    its shards, then merge them: ``scale.shard_chunks``); write the embeddings, the index, its
    stats and the long-chunk stats. With ``block``: only that shard (a shard task)."""
    import faiss

    from ragcourt.retrieval.embedders import registry_entry

    spec = _check_cell(params, chunking, embedder)
    key = f"embedders.{embedder}.index"
    dim = registry_entry(spec.model).dim
    check_factory(spec, dim, key)
    src = catalog.path("chunks", chunking=chunking)
    if not src.is_file():
        raise RagcourtError(f"{src}: input artifact not found (run the chunk stage)")
    warn_language_fit(spec.model)
    plan = _embed_shards(params, chunking, embedder, block)
    if block is not None:
        return plan[block][0], index_path(chunking, embedder)
    done: dict[str, Any] = {}

    def embed_and_index(tmp: Path) -> None:
        merged = merge_shards(plan, tmp) if plan else None
        long = merged or embed_stream(src, spec, tmp, chunking, embedder)
        index, build_s, recall, n_query = build_streamed(tmp, spec, long, dim, key)
        done.update(long=long, index=index, build_s=build_s, recall=recall, n_query=n_query)

        def write_index(p: Path) -> None:
            faiss.write_index(index, str(p))
            done["bytes"] = p.stat().st_size

        write_with(index_path(chunking, embedder), write_index)

    out_emb = write_with(embeddings_path(chunking, embedder), embed_and_index)
    long: LongChunkStats = done["long"]
    warn_long_chunks(long, spec)
    body = json.dumps(long.to_json(), indent=2, sort_keys=True) + "\n"

    def write_long_stats(p: Path) -> None:
        p.write_text(body, encoding="utf-8")

    write_with(stats_path(chunking, embedder), write_long_stats)
    index = done["index"]
    stats = IndexStats(
        chunking=chunking,
        embedder=embedder,
        requested=spec.index,
        factory=resolve_factory(spec, long.n_vectors),
        metric="inner_product",
        n_vectors=int(index.ntotal),
        n_chunks=long.n_chunks,
        dim=int(index.d),
        build_s=round(done["build_s"], 3),
        index_bytes=done["bytes"],
        recall_at_10=round(done["recall"], 6),
        recall_queries=done["n_query"],
        ef_search=spec.ef_search,
        nprobe=spec.nprobe,
        seed=spec.index_seed,
    )
    write_parquet(stats.frame(), index_stats_path(chunking, embedder), "index_stats")
    log.info(
        "embed: %s x %s: %d vectors of dim %d for %d chunks; index %s built in %.2f s, "
        "%d bytes, recall@10 vs exact %.4f (%d queries)",
        chunking, embedder, index.ntotal, index.d, long.n_chunks, stats.factory,
        stats.build_s, stats.index_bytes, stats.recall_at_10, stats.recall_queries,
    )  # fmt: skip
    return out_emb, index_path(chunking, embedder)
