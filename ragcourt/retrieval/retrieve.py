"""Retrieval library: dense (FAISS), BM25 (bm25s) and hybrid (reciprocal rank fusion).

Every retriever returns the same ``retrieval_run`` table: query_id, chunk_id, rank (1-based),
score, retriever. Inputs are the stage artifacts under the current directory:
``data/chunks/<chunking>.parquet``, ``data/embeddings/<chunking>__<embedder>.parquet`` and
``data/index/<chunking>__<embedder>.faiss``.

* **dense**: the query is embedded with the chunking's embedder (L2-normalised, with the
  embedder's query prefix) and searched in the ``IndexIDMap`` over the index of
  ``embedders.<e>.index`` (``IndexFlatIP``: exact inner product = cosine; an approximate
  factory string: searched with ``ef_search`` / ``nprobe``,
  :mod:`ragcourt.retrieval.vector_index`), whose labels are chunk ordinals. A chunk embedded
  as several windows scores as its best window, ``max_w cos(q, w)``: the search goes ``k x``
  (most windows of a chunk) deep, so the first k distinct chunks are the top k (exactly so
  for a flat index), each listed once.
* **bm25**: bm25s over the chunk texts with ``retrieval.bm25`` (variant, k1, b; tokenizer per
  language, :mod:`ragcourt.retrieval.bm25_tokens`: on English bm25s' regex tokenizer,
  lower-cased, optional stopword list and PyStemmer stemmer; jieba for Chinese). Saved by
  the ``bm25`` stage and memory-mapped when opened (:mod:`ragcourt.retrieval.bm25_index`);
  without a matching saved index, built in memory (memoised per chunks file and settings).
  Chunks scoring 0 (no query term in common) are not returned, so a query can get < k hits.
* **hybrid**: RRF of the dense and BM25 rankings, each taken to depth k (:func:`rrf_fuse`).

Each kind is a :class:`RetrieverKind` in :data:`RETRIEVERS` (built-ins:
:mod:`ragcourt.retrieval.retriever_kinds`); :func:`open_retriever` opens one.
Ties are broken deterministically: dense and BM25 by chunk order in the chunks table, RRF as
documented on :func:`rrf_fuse`.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import polars as pl

from ragcourt.core import catalog
from ragcourt.core.errors import ConfigError, RagcourtError
from ragcourt.core.registry import Registry
from ragcourt.core.schemas import frame_schema
from ragcourt.retrieval.params import BM25Params, RetrievalView

RUN_SCHEMA = frame_schema("retrieval_run")
log = logging.getLogger("ragcourt.retrieval")


class Retriever(Protocol):
    name: str

    def search(self, queries: pl.DataFrame, k: int) -> pl.DataFrame: ...


def empty_run() -> pl.DataFrame:
    return pl.DataFrame(schema=RUN_SCHEMA)


def _run_frame(
    query_ids: list[str], chunk_ids: list[str], ranks: list[int], scores: list[float], name: str
) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "query_id": query_ids,
            "chunk_id": chunk_ids,
            "rank": ranks,
            "score": scores,
            "retriever": [name] * len(query_ids),
        },
        schema=RUN_SCHEMA,
    )


def _check_queries(queries: pl.DataFrame) -> None:
    for col in ("query_id", "query"):
        if col not in queries.columns:
            raise RagcourtError(f"queries frame lacks column '{col}' (has {queries.columns})")
    if queries["query_id"].is_duplicated().any():
        dup = queries.filter(pl.col("query_id").is_duplicated())["query_id"][0]
        raise RagcourtError(f"queries: duplicate query_id '{dup}'")


# ---------------------------------------------------------------------------------------------
# Reciprocal rank fusion


def rrf_fuse(
    runs: list[pl.DataFrame], k: int = 60, depth: int | None = None, name: str = "hybrid"
) -> pl.DataFrame:
    """Fuse rankings per query: score(d) = Σ_runs 1 / (k + rank_run(d)), rank 1-based.

    A chunk absent from a run adds nothing for that run; a chunk listed twice in one run counts
    once, at its best rank. Scores are rounded to 12 decimals so the order never depends on
    float summation order. Ties: higher score, then the better (smaller) best rank in any run,
    then chunk_id ascending. ``depth`` keeps the first ``depth`` fused ranks per query.
    """
    if k <= 0:
        raise ConfigError(f"rrf k must be positive, got {k}")
    frames = [
        r.group_by("query_id", "chunk_id").agg(pl.col("rank").cast(pl.Int64).min())
        for r in runs
        if r.height
    ]
    if not frames:
        return empty_run()
    fused = (
        pl.concat(frames)
        .group_by("query_id", "chunk_id")
        .agg(
            (1.0 / (k + pl.col("rank"))).sum().round(12).alias("score"),
            pl.col("rank").min().alias("_best"),
        )
        .sort(
            ["query_id", "score", "_best", "chunk_id"],
            descending=[False, True, False, False],
        )
        .with_columns(pl.int_range(1, pl.len() + 1).over("query_id").alias("rank"))
    )
    if depth is not None:
        fused = fused.filter(pl.col("rank") <= depth)
    return fused.select(
        pl.col("query_id").cast(pl.String),
        pl.col("chunk_id").cast(pl.String),
        pl.col("rank").cast(pl.Int32),
        pl.col("score").cast(pl.Float64),
        pl.lit(name, dtype=pl.String).alias("retriever"),
    )


# ---------------------------------------------------------------------------------------------
# Dense


@dataclass
class DenseRetriever:
    """Inner-product search over L2-normalised chunk vectors; FAISS label ``j`` is
    ``chunk_ids[j]``, several windows of one chunk may share it (``max_vectors`` at most)."""

    model: str  # registry embedder name
    index: Any  # faiss.Index
    chunk_ids: list[str]
    batch_size: int = 32
    name: str = "dense"
    max_vectors: int = 1  # most vectors (windows) any one chunk has in the index

    def search(self, queries: pl.DataFrame, k: int) -> pl.DataFrame:
        from ragcourt.retrieval.embedders import encode
        from ragcourt.retrieval.long_chunks import best_per_chunk

        _check_queries(queries)
        kk = min(k, len(self.chunk_ids))
        if queries.is_empty() or kk <= 0:
            return empty_run()
        vecs = encode(
            self.model, queries["query"].to_list(), batch_size=self.batch_size, role="query"
        )
        depth = min(kk * self.max_vectors, self.index.ntotal)
        scores, labels = self.index.search(vecs, depth)
        best = best_per_chunk(labels, scores, kk)
        idx = np.full((len(best), kk), -1, dtype=np.int64)
        top = np.zeros((len(best), kk), dtype=np.float64)
        for qi, hits in enumerate(best):
            for r, (lab, sc) in enumerate(hits):
                idx[qi, r], top[qi, r] = lab, sc
        return _topk_frame(queries["query_id"].to_list(), idx, top, self.chunk_ids, self.name)


def _topk_frame(
    qids: list[str], idx: np.ndarray, scores: np.ndarray, chunk_ids: list[str], name: str
) -> pl.DataFrame:
    """Rows for a (n_queries, k) block of row indices and scores; -1 rows (no hit) dropped."""
    q_out, c_out, r_out, s_out = [], [], [], []
    for qi, qid in enumerate(qids):
        rank = 0
        for j, sc in zip(idx[qi].tolist(), scores[qi].tolist(), strict=True):
            if j < 0:
                continue
            rank += 1
            q_out.append(qid)
            c_out.append(chunk_ids[j])
            r_out.append(rank)
            s_out.append(float(sc))
    return _run_frame(q_out, c_out, r_out, s_out, name)


def open_dense(chunking: str, embedder: str, params: RetrievalView) -> DenseRetriever:
    import faiss

    from ragcourt.retrieval.embedders import registry_entry
    from ragcourt.retrieval.vector_index import configure_search

    if embedder not in params.embedders:
        raise ConfigError(
            f"embedder '{embedder}' is not one of embedders {sorted(params.embedders)}"
        )
    spec = params.embedders[embedder]
    idx_path = catalog.path("index", chunking=chunking, embedder=embedder)
    emb_path = catalog.path("embeddings", chunking=chunking, embedder=embedder)
    for p in (idx_path, emb_path):
        if not p.is_file():
            raise RagcourtError(f"{p}: input artifact not found (run the embed stage)")
    try:
        index = faiss.read_index(str(idx_path))
    except RuntimeError as err:
        raise RagcourtError(f"{idx_path}: not a readable FAISS index ({err})") from None
    from ragcourt.core.io import read_table

    # schema of the whole file checked against 'embeddings'; only chunk_id is loaded
    rows = read_table(emb_path, "embeddings", columns=["chunk_id"])["chunk_id"]
    if index.ntotal != len(rows):
        raise RagcourtError(
            f"{idx_path}: {index.ntotal} vectors but {emb_path} has {len(rows)} rows "
            "(out of sync: re-run the embed stage)"
        )
    ids = rows.unique(maintain_order=True).to_list()
    if len(ids) != len(rows) and not hasattr(index, "id_map"):
        raise RagcourtError(f"{idx_path}: windows without chunk labels (re-run the embed stage)")
    dim = registry_entry(spec.model).dim
    if index.d != dim:
        raise RagcourtError(f"{idx_path}: index dim {index.d} != embedder '{spec.model}' dim {dim}")
    most = max(Counter(rows.to_list()).values(), default=1)
    configure_search(index, spec)
    return DenseRetriever(
        model=spec.model,
        index=index,
        chunk_ids=ids,
        batch_size=spec.batch_size,
        max_vectors=most,
    )


# ---------------------------------------------------------------------------------------------
# BM25


@dataclass
class BM25Retriever:
    """bm25s over chunk texts; settings from ``retrieval.bm25``.

    Each chunk is tokenized with the tokenizer of its language (``languages``, one ISO 639-1 code
    per chunk: its document's language; ``None`` detects each chunk's own), see
    :mod:`ragcourt.retrieval.bm25_tokens`. A query gets the tokenizer of the corpus language it
    is most likely in (:func:`~ragcourt.corpus.language.detect_language` among the corpus
    languages); when every corpus language maps to one tokenizer no query is detected at all.
    """

    chunk_ids: list[str]
    texts: list[str]
    settings: BM25Params
    languages: list[str] | None = None
    name: str = "bm25"
    # a saved index (bm25s.BM25) and its corpus languages, most frequent first: no texts needed
    prebuilt: Any = field(default=None, repr=False)
    prebuilt_languages: list[str] | None = field(default=None, repr=False)
    _bm25: Any = field(init=False, repr=False)
    _tokenizers: Any = field(init=False, repr=False)
    _corpus_languages: list[str] = field(init=False, repr=False)
    _single_spec: bool = field(init=False, repr=False)

    def __post_init__(self) -> None:
        import bm25s

        from ragcourt.corpus.language import detect_language
        from ragcourt.retrieval.bm25_tokens import LanguageTokenizers, spec_for

        if self.prebuilt is not None:
            self._bm25 = self.prebuilt
            self._corpus_languages = list(self.prebuilt_languages or ["en"])
            self._single_spec = (
                len({spec_for(lang, self.settings) for lang in self._corpus_languages}) == 1
            )
            self._tokenizers = LanguageTokenizers(self.settings, open_queries=True)
            return
        if self.languages is None:
            self.languages = [detect_language(t).language for t in self.texts]
        if len(self.languages) != len(self.texts):
            raise ValueError(
                f"BM25Retriever: {len(self.texts)} texts but {len(self.languages)} languages"
            )
        counts: dict[str, int] = {}
        for lang in self.languages:
            counts[lang] = counts.get(lang, 0) + 1
        self._corpus_languages = sorted(counts, key=lambda c: (-counts[c], c)) or ["en"]
        specs = {spec_for(lang, self.settings) for lang in self._corpus_languages}
        self._single_spec = len(specs) == 1
        self._tokenizers = LanguageTokenizers(self.settings)
        tokens = self._tokenizers.tokenize(self.texts, self.languages)
        s = self.settings
        self._bm25 = bm25s.BM25(method=s.method, k1=s.k1, b=s.b)
        # token ids in sorted order (bm25s numbers a set's iteration order, which changes with
        # the interpreter's hash seed): the same chunks give the same saved index bytes
        vocab = {t: i for i, t in enumerate(sorted({t for row in tokens for t in row}))}
        ids = [[vocab[t] for t in row] for row in tokens]
        self._bm25.index((ids, vocab), show_progress=False)

    @property
    def corpus_languages(self) -> list[str]:
        """The corpus languages, most frequent first (ties by code)."""
        return list(self._corpus_languages)

    @property
    def model(self) -> Any:
        """The bm25s.BM25 index."""
        return self._bm25

    def tokenizer_by_language(self) -> dict[str, str]:
        """Corpus language -> label of the tokenizer its chunks went through."""
        from ragcourt.retrieval.bm25_tokens import spec_for

        return {lang: spec_for(lang, self.settings).label for lang in self._corpus_languages}

    def query_languages(self, queries: list[str]) -> list[str]:
        """The corpus language each query is tokenized as."""
        from ragcourt.corpus.language import detect_language

        if self._single_spec:
            return [self._corpus_languages[0]] * len(queries)
        return [detect_language(q, among=self._corpus_languages).language for q in queries]

    def query_tokens(self, queries: list[str]) -> list[list[str]]:
        tokens: list[list[str]] = self._tokenizers.tokenize(
            queries, self.query_languages(queries), queries=True
        )
        return tokens

    def search(self, queries: pl.DataFrame, k: int) -> pl.DataFrame:
        _check_queries(queries)
        kk = min(k, len(self.chunk_ids))
        if queries.is_empty() or kk <= 0:
            return empty_run()
        q_tokens = self.query_tokens(queries["query"].to_list())
        n = len(queries)
        idx = np.full((n, kk), -1, dtype=np.int64)
        scores = np.zeros((n, kk), dtype=np.float64)
        for qi, toks in enumerate(q_tokens):
            ids = self._bm25.get_tokens_ids([t for t in toks if t])
            if not ids:
                continue
            s = np.asarray(self._bm25.get_scores_from_ids(ids), dtype=np.float64)
            order = np.argsort(-s, kind="stable")[:kk]
            order = order[s[order] > 0]
            idx[qi, : len(order)] = order
            scores[qi, : len(order)] = s[order]
        return _topk_frame(queries["query_id"].to_list(), idx, scores, self.chunk_ids, self.name)


def chunk_languages(chunks: pl.DataFrame, documents_path: str) -> list[str] | None:
    """Each chunk's document language from the documents table (``None`` when the table or its
    ``language`` column is missing: the retriever then detects each chunk's language)."""
    from ragcourt.core.io import read_table

    if not Path(documents_path).is_file():
        return None
    docs = read_table(documents_path, "documents", columns=["doc_id", "language"])
    by_doc = dict(zip(docs["doc_id"].to_list(), docs["language"].to_list(), strict=True))
    langs = [by_doc.get(d) for d in chunks["doc_id"].to_list()]
    if any(lang is None for lang in langs):
        return None
    return [str(lang) for lang in langs]


@cache
def _bm25_cached(
    path: str, mtime_ns: int, docs_path: str, docs_mtime_ns: int, settings_json: str
) -> BM25Retriever:
    from ragcourt.core.io import read_table

    chunks = read_table(path, "chunks")
    settings = BM25Params.model_validate(json.loads(settings_json))
    return BM25Retriever(
        chunks["chunk_id"].to_list(),
        chunks["text"].to_list(),
        settings,
        languages=chunk_languages(chunks, docs_path),
    )


BM25_META = "ragcourt.json"  # beside bm25s' own files: settings, languages, chunks sha256
BM25_FORMAT = 1


def bm25_dir(chunking: str) -> Path:
    """The ``bm25`` stage's saved index of ``chunking`` (:mod:`ragcourt.retrieval.bm25_index`)."""
    return catalog.path("bm25_index", chunking=chunking)


def saved_bm25_meta(folder: Path) -> dict[str, Any] | None:
    """The ``ragcourt.json`` of a saved BM25 index (None when absent or unreadable)."""
    try:
        data = json.loads((folder / BM25_META).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("format") == BM25_FORMAT else None


def open_saved_bm25(chunking: str, settings: BM25Params) -> BM25Retriever | None:
    """The saved BM25 index of ``chunking``, memory-mapped (``bm25s.BM25.load(mmap=True)``),
    or None when there is none or it was built from another chunks file or other settings."""
    folder = bm25_dir(chunking)
    chunks = catalog.path("chunks", chunking=chunking)
    meta_path = folder / BM25_META
    if not meta_path.is_file() or not chunks.is_file():
        return None
    return _open_saved_bm25(
        str(folder.resolve()),
        meta_path.stat().st_mtime_ns,
        str(chunks.resolve()),
        chunks.stat().st_mtime_ns,
        settings.model_dump_json(),
    )


@cache
def _open_saved_bm25(
    folder: str, meta_mtime: int, chunks: str, chunks_mtime: int, settings_json: str
) -> BM25Retriever | None:
    import bm25s

    from ragcourt.core.fingerprint import file_sha256
    from ragcourt.core.io import read_table

    settings = BM25Params.model_validate_json(settings_json)
    meta = saved_bm25_meta(Path(folder))
    if meta is None or meta.get("settings") != settings.model_dump(mode="json"):
        log.info("bm25: %s was saved with other settings: built in memory instead", folder)
        return None
    if meta.get("chunks_sha256") != file_sha256(Path(chunks)):
        log.info("bm25: %s was built from another chunks file: built in memory instead", folder)
        return None
    ids = read_table(chunks, "chunks", columns=["chunk_id"])["chunk_id"].to_list()
    if len(ids) != meta.get("n_chunks"):
        return None
    model = bm25s.BM25.load(folder, mmap=True, load_corpus=False, show_progress=False)
    return BM25Retriever(
        ids, [], settings, prebuilt=model, prebuilt_languages=list(meta["corpus_languages"])
    )


def open_bm25(chunking: str, params: RetrievalView) -> BM25Retriever:
    """The chunking's BM25 retriever: the ``bm25`` stage's saved index memory-mapped when it
    matches the chunks file and ``retrieval.bm25`` (:mod:`ragcourt.retrieval.bm25_index`),
    else built in memory from the chunks."""
    path = catalog.path("chunks", chunking=chunking)
    if not path.is_file():
        raise RagcourtError(f"{path}: input artifact not found (run the chunk stage)")
    saved = open_saved_bm25(chunking, params.retrieval.bm25)
    if saved is not None:
        return saved
    docs = catalog.path("documents")
    docs_mtime = docs.stat().st_mtime_ns if docs.is_file() else 0
    settings = params.retrieval.bm25.model_dump_json()
    return _bm25_cached(
        str(path.resolve()), path.stat().st_mtime_ns, str(docs.resolve()), docs_mtime, settings
    )


# ---------------------------------------------------------------------------------------------
# Hybrid


@dataclass
class HybridRetriever:
    """RRF of a dense and a BM25 ranking, each to depth k."""

    dense: DenseRetriever
    bm25: BM25Retriever
    rrf_k: int = 60
    name: str = "hybrid"

    def search(self, queries: pl.DataFrame, k: int) -> pl.DataFrame:
        runs = [self.dense.search(queries, k), self.bm25.search(queries, k)]
        return rrf_fuse(runs, k=self.rrf_k, depth=k, name=self.name)


@dataclass(frozen=True)
class RetrieverKind:
    """A registered retriever over an index: ``open(chunking, embedder, params)`` returns it;
    ``embedder``: it reads the dense index of an embedder; ``bm25``: it reads the BM25 index
    (and ``retrieval.bm25`` params)."""

    open: Callable[[str, str | None, RetrievalView], Retriever]
    embedder: bool
    bm25: bool


RETRIEVERS: Registry[RetrieverKind] = Registry(
    "retriever", builtins=("ragcourt.retrieval.retriever_kinds",)
)
"""Retrievers with an index, by kind (a system's ``retriever``; the built-in ones in
:mod:`ragcourt.retrieval.retriever_kinds`, plug-ins through entry points); control retrievers
without an index are :data:`ragcourt.answering.retriever_kinds.CONTROL_RETRIEVERS`."""


def retriever_settings(kind: str, params: RetrievalView) -> Any:
    """``retrieval.settings.<kind>`` validated against the kind's settings model (None for a
    kind without one; one-line ConfigError naming the key and field)."""
    key = f"retrieval.settings.{kind}"
    return RETRIEVERS.settings(kind, params.retrieval.settings.get(kind), key)


def open_retriever(
    kind: str, chunking: str, embedder: str | None, params: RetrievalView
) -> Retriever:
    """A retriever over the artifacts of ``chunking`` (and ``embedder`` for dense/hybrid),
    its settings checked first (:func:`retriever_settings`)."""
    if chunking not in params.chunkings:
        raise ConfigError(
            f"chunking '{chunking}' is not one of chunkings {sorted(params.chunkings)}"
        )
    opener = RETRIEVERS.get(kind, "retriever").open
    retriever_settings(kind, params)
    return opener(chunking, embedder, params)
