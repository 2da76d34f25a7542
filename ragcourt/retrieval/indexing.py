"""Embed stage: chunks of one chunking -> embeddings Parquet + FAISS index, per embedder.

Vectors come from :func:`ragcourt.retrieval.long_chunks.embed_chunks` (float32,
L2-normalised). A chunk longer than the model's window, counted in the model's own tokens, is
embedded per ``embedders.<e>.long_chunks``: ``windows`` (one vector per overlapping window),
``pool`` (their mean) or ``truncate`` (its first window). Outputs, written atomically:

* ``data/embeddings/<chunking>__<embedder>.parquet`` (table ``embeddings``): ``chunk_id`` and
  ``embedding`` as a fixed-size ``Array(Float32, dim)``, one row per vector in chunk order (a
  windowed chunk has several consecutive rows with its chunk_id).
* ``data/index/<chunking>__<embedder>.faiss``: ``IndexIDMap(IndexFlatIP)`` over the same
  vectors in the same order, each labelled with its chunk's ordinal (position among the
  distinct chunk_ids of the embeddings table); inner product of unit vectors is cosine.
* ``data/index/<chunking>__<embedder>.json``: :class:`~ragcourt.retrieval.long_chunks.\
LongChunkStats` (window, chunks over it, strategy, vectors), shown by the report.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from ragcourt.core import catalog
from ragcourt.core.errors import ConfigError, RagcourtError
from ragcourt.core.io import read_table, write_parquet, write_with
from ragcourt.core.params import EmbedderSpec, Params
from ragcourt.retrieval.long_chunks import LongChunkStats

if TYPE_CHECKING:
    import faiss

log = logging.getLogger("ragcourt.embed")


def embeddings_path(chunking: str, embedder: str) -> Path:
    return catalog.path("embeddings", chunking=chunking, embedder=embedder)


def index_path(chunking: str, embedder: str) -> Path:
    return catalog.path("index", chunking=chunking, embedder=embedder)


def stats_path(chunking: str, embedder: str) -> Path:
    return catalog.path("embed_stats", chunking=chunking, embedder=embedder)


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
    if stats.n_over_window:
        log.warning(
            "embed: %d of %d chunks exceed %s's window of %d tokens (its own word pieces; "
            "longest %d): %s (long_chunks: %s, %d vectors)",
            stats.n_over_window, stats.n_chunks, spec.model, stats.window, stats.max_tokens,
            stats.handling, spec.long_chunks, stats.n_vectors,
        )  # fmt: skip
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


def run(params: Params, chunking: str, embedder: str) -> tuple[Path, Path]:
    """Embed data/chunks/<chunking>.parquet with ``embedders[embedder]``; write parquet, index
    and long-chunk stats."""
    import faiss

    if chunking not in params.chunkings:
        raise ConfigError(
            f"chunking '{chunking}' is not one of chunkings {sorted(params.chunkings)}"
        )
    if embedder not in params.embedders:
        raise ConfigError(
            f"embedder '{embedder}' is not one of embedders {sorted(params.embedders)}"
        )
    spec = params.embedders[embedder]
    src = catalog.path("chunks", chunking=chunking)
    chunks = read_table(src, "chunks")
    if chunks.is_empty():
        raise RagcourtError(f"{src}: no chunks to embed")
    warn_language_fit(spec.model)
    emb, owners, stats = embed_chunks(chunks, spec, chunking, embedder)
    index = build_index(vectors_of(emb), owners)
    out_idx = write_with(index_path(chunking, embedder), lambda p: faiss.write_index(index, str(p)))
    out_emb = write_parquet(emb, embeddings_path(chunking, embedder), "embeddings")
    body = json.dumps(stats.to_json(), indent=2, sort_keys=True) + "\n"

    def write_stats(p: Path) -> None:
        p.write_text(body, encoding="utf-8")

    write_with(stats_path(chunking, embedder), write_stats)
    log.info(
        "embed: %s x %s: %d vectors of dim %d for %d chunks",
        chunking, embedder, index.ntotal, index.d, stats.n_chunks,
    )  # fmt: skip
    return out_emb, out_idx
