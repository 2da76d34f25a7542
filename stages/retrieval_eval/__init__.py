"""The ``retrieval_eval`` stage: ``python -m stages retrieval_eval`` under DVC, a task in the
Prefect flow."""

from __future__ import annotations

from ragcourt.orchestration.stage_def import EMBEDDERS, StageDef, art

STAGE = StageDef(
    "retrieval_eval",
    "ragcourt.retrieval.evaluation:run",
    "Recall/MRR/nDCG/Precision/Hits@k of every (chunking, embedder, retriever) on the QA\n"
    "set, relevance by span overlap; BM25 once per chunking.",
    deps=(
        art("qa"),
        art("documents"),  # document languages pick the BM25 tokenizers
        art("chunks", chunking="*"),
        art("bm25_index", chunking="*"),
        art("embeddings", chunking="*", embedder="*"),
        art("index", chunking="*", embedder="*"),
    ),
    params=("chunkings", "embedders", "retrieval"),
    models=(EMBEDDERS,),
)
