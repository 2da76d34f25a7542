"""The retrieval sections of ``params.yaml``: ``embedders`` and ``retrieval``."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Protocol

from pydantic import (
    Field,
    StrictInt,
)

from ragcourt.core.params import (
    NonEmptyStr,
    Strict,
)
from ragcourt.corpus.params import CorpusView

LongChunks = Literal["windows", "pool", "truncate"]


class EmbedderSpec(Strict):
    """An embedder: ``model`` is a key of configs/models.yaml ``embedders``. A chunk longer than
    the model's window (in its own tokens) is embedded per ``long_chunks``: ``windows`` (every
    overlapping window indexed, a chunk scored by its best), ``pool`` (mean of the windows) or
    ``truncate`` (first window only); ``window_overlap`` tokens are shared by two windows."""

    model: NonEmptyStr
    batch_size: StrictInt = Field(default=32, gt=0, le=100_000)
    long_chunks: LongChunks = "windows"
    window_overlap: StrictInt = Field(default=32, ge=0, le=4096)
    # the vector index: 'auto' (exact Flat up to index_flat_max vectors, HNSW32 above) or any
    # FAISS index_factory string ('Flat', 'HNSW32', 'IVF4096,PQ32', ...), inner-product
    # metric, checked by FAISS before the embed stage embeds anything
    index: NonEmptyStr = "auto"
    index_flat_max: StrictInt = Field(default=100_000, ge=0)
    # search-time breadth of an approximate index: HNSW efSearch, IVF nprobe
    ef_search: StrictInt = Field(default=128, gt=0, le=100_000)
    nprobe: StrictInt = Field(default=32, gt=0, le=1_000_000)
    # trained indexes (IVF, PQ) learn from a seeded sample; recall@10 against exact search is
    # measured on index_recall_queries stored vectors drawn with the same seed
    index_seed: StrictInt = Field(default=0, ge=0)
    index_recall_queries: StrictInt = Field(default=200, ge=0, le=100_000)
    # chunks read, embedded and written per step of the embed stage (bounded memory)
    stream_chunks: StrictInt = Field(default=4096, gt=0, le=10_000_000)

    def identity(self) -> dict[str, object]:
        """The fields a system's config hash holds: every field, less the index and streaming
        fields left at their defaults (the built index is a hashed input file already), so a
        system hashed before those fields existed keeps its hash."""
        out = self.model_dump()
        for name in _INDEX_FIELDS:
            if out[name] == type(self).model_fields[name].default:
                del out[name]
        return out


_INDEX_FIELDS = (
    "index", "index_flat_max", "ef_search", "nprobe", "index_seed", "index_recall_queries",
    "stream_chunks",
)  # fmt: skip


class RelevanceRule(Strict):
    """Span-overlap rule (spec §1): a chunk is relevant to a ground-truth span when the overlap
    covers >= ``min_span_coverage`` of the span OR >= ``min_chunk_coverage`` of the chunk."""

    min_span_coverage: float = Field(default=0.5, gt=0, le=1)
    min_chunk_coverage: float = Field(default=0.5, gt=0, le=1)


class BM25Params(Strict):
    method: Literal["robertson", "lucene", "bm25l", "bm25+", "atire"] = "lucene"
    k1: float = Field(default=1.5, ge=0, le=100)
    b: float = Field(default=0.75, ge=0, le=1)
    stopwords: str | None = "en"  # bm25s stopword list ("en") or null
    stemmer: str | None = "english"  # PyStemmer language, or null for no stemming
    # auto: per document / query language (English: the regex tokenizer with the stopwords and
    # stemmer above; Chinese: jieba; Japanese/Korean: character bigrams); regex | jieba | bigram:
    # that tokenizer for every text (ragcourt.retrieval.bm25_tokens)
    tokenizer: Literal["auto", "regex", "jieba", "bigram"] = "auto"


class RetrievalParams(Strict):
    # kinds of the retriever registry (ragcourt.retrieval.retrieve.RETRIEVERS), checked there
    retrievers: list[NonEmptyStr] = Field(
        default_factory=lambda: ["dense", "bm25", "hybrid"], min_length=1
    )
    rrf_k: StrictInt = Field(default=60, gt=0)
    depth: StrictInt = Field(default=10, gt=0)
    ks: list[Annotated[StrictInt, Field(ge=1, le=100_000)]] = Field(
        default_factory=lambda: [1, 3, 5, 10], min_length=1
    )
    relevance: RelevanceRule = Field(default_factory=RelevanceRule)
    bm25: BM25Params = Field(default_factory=BM25Params)
    # each retriever kind's own settings, by kind (validated against the model the kind
    # registered, ragcourt.core.registry; `ragcourt kinds retriever` lists them)
    settings: dict[str, dict[str, Any]] = Field(default_factory=dict)


class RetrievalView(CorpusView, Protocol):
    """The params embedding, indexing and retrieval read: the corpus view's, ``embedders``
    and ``retrieval``."""

    embedders: dict[str, EmbedderSpec]
    retrieval: RetrievalParams
