"""The built-in retriever kinds of :data:`~ragcourt.retrieval.retrieve.RETRIEVERS`:
``dense`` (FAISS), ``bm25`` (bm25s) and ``hybrid`` (RRF of the two, ``retrieval.rrf_k``).
The registry imports this module on its first lookup."""

from __future__ import annotations

from ragcourt.core.errors import ConfigError
from ragcourt.retrieval.params import RetrievalView
from ragcourt.retrieval.retrieve import (
    RETRIEVERS,
    HybridRetriever,
    Retriever,
    RetrieverKind,
    open_bm25,
    open_dense,
)


def _needs_embedder(kind: str, embedder: str | None) -> str:
    if embedder is None:
        raise ConfigError(f"retriever '{kind}' needs an embedder")
    return embedder


def _open_hybrid(chunking: str, embedder: str | None, params: RetrievalView) -> Retriever:
    dense = open_dense(chunking, _needs_embedder("hybrid", embedder), params)
    return HybridRetriever(dense, open_bm25(chunking, params), rrf_k=params.retrieval.rrf_k)


RETRIEVERS.register("dense")(
    RetrieverKind(
        lambda chunking, embedder, params: open_dense(
            chunking, _needs_embedder("dense", embedder), params
        ),
        embedder=True,
        bm25=False,
    )
)
RETRIEVERS.register("bm25")(
    RetrieverKind(
        lambda chunking, embedder, params: open_bm25(chunking, params), embedder=False, bm25=True
    )
)
RETRIEVERS.register("hybrid")(RetrieverKind(_open_hybrid, embedder=True, bm25=True))
