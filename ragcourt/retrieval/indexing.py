"""Embed stage: chunks of one chunking -> embeddings Parquet + FAISS index, per embedder.

Vectors come from :func:`ragcourt.retrieval.embedders.encode` (float32, L2-normalised, batched with
a progress bar). Outputs, both written atomically (temp file + rename):

* ``data/embeddings/<chunking>__<embedder>.parquet`` (table ``embeddings``): ``chunk_id`` and
  ``embedding`` as a fixed-size ``Array(Float32, dim)``, in the chunks table's row order.
* ``data/index/<chunking>__<embedder>.faiss``: ``IndexFlatIP`` over the same vectors in the same
  order, so FAISS row ``i`` is the embeddings row ``i``; inner product of unit vectors is cosine.

Chunks longer than the model's ``max_seq_length`` word pieces are truncated by the model; the
stage logs how many so a chunk size beyond the embedder's window is visible.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from ragcourt.core import catalog
from ragcourt.core.errors import ConfigError, RagcourtError
from ragcourt.core.io import read_table, write_parquet, write_with
from ragcourt.core.params import Params

if TYPE_CHECKING:
    import faiss
    from sentence_transformers import SentenceTransformer

log = logging.getLogger("ragcourt.embed")


def embeddings_path(chunking: str, embedder: str) -> Path:
    return catalog.path("embeddings", chunking=chunking, embedder=embedder)


def index_path(chunking: str, embedder: str) -> Path:
    return catalog.path("index", chunking=chunking, embedder=embedder)


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


def build_index(vectors: np.ndarray) -> faiss.IndexFlatIP:
    """An exact inner-product index over ``vectors`` (row ``i`` = FAISS id ``i``)."""
    import faiss

    index = faiss.IndexFlatIP(int(vectors.shape[1]))
    index.add(np.ascontiguousarray(vectors, dtype=np.float32))
    return index


def embed_chunks(chunks: pl.DataFrame, model: str, batch_size: int) -> pl.DataFrame:
    """Embed every chunk text with registry embedder ``model``."""
    from ragcourt.retrieval.embedders import encode, load_embedder

    texts = chunks["text"].to_list()
    st = load_embedder(model)
    if texts and st.max_seq_length:
        long = _count_truncated(st, texts)
        if long:
            log.warning(
                "embed: %d of %d chunks exceed %s's window of %d word pieces and are truncated",
                long, len(texts), model, st.max_seq_length,
            )  # fmt: skip
    vectors = encode(model, texts, batch_size=batch_size, show_progress=True)
    return embeddings_frame(chunks["chunk_id"].to_list(), vectors)


def _count_truncated(st: SentenceTransformer, texts: list[str]) -> int:
    """How many ``texts`` have more word pieces than the model's ``max_seq_length``."""
    limit = st.max_seq_length
    if not limit:
        return 0
    enc = st.tokenizer(texts, add_special_tokens=True, truncation=False, verbose=False)
    lengths = [len(ids) for ids in enc["input_ids"]]
    return sum(n > limit for n in lengths)


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
    """Embed data/chunks/<chunking>.parquet with ``embedders[embedder]``; write parquet + index."""
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
    emb = embed_chunks(chunks, spec.model, spec.batch_size)
    index = build_index(vectors_of(emb))
    out_idx = write_with(index_path(chunking, embedder), lambda p: faiss.write_index(index, str(p)))
    out_emb = write_parquet(emb, embeddings_path(chunking, embedder), "embeddings")
    log.info("embed: %s x %s: %d vectors of dim %d", chunking, embedder, index.ntotal, index.d)
    return out_emb, out_idx
