"""The ``bm25`` stage: ``python -m stages bm25`` under DVC, a task in the Prefect flow."""

from __future__ import annotations

from ragcourt.orchestration.stage_def import StageDef, art

STAGE = StageDef(
    "bm25",
    "ragcourt.retrieval.bm25_index:run",
    "Each chunking's BM25 (bm25s) index, saved once; the retrievers memory-map it.",
    deps=(
        art("documents"),  # document languages pick the BM25 tokenizers
        art("chunks", chunking="$chunking"),
    ),
    params=("retrieval.bm25",),  # its settings only: a change of retrieval.ks re-runs no index
    partition=("chunking",),
)
