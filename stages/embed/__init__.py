"""The ``embed`` stage: ``python -m stages embed`` under DVC, a task in the Prefect flow."""

from __future__ import annotations

from ragcourt.orchestration.stage_def import EMBEDDERS, StageDef, art

STAGE = StageDef(
    "embed",
    "ragcourt.retrieval.indexing:run",
    "Chunk vectors + a FAISS index per (chunking, embedder); chunks over the\n"
    "embedder's window are windowed, pooled or truncated (embedders.<e>.long_chunks).",
    deps=(art("chunks", chunking="$chunking"),),
    params=(
        "embedders.{embedder}",
        "chunkings.{chunking}.size",
        "chunkings.{chunking}.overlap",
        "scale.shard_chunks",
    ),
    models=(EMBEDDERS,),
    partition=("chunking", "embedder"),
    shards="ragcourt.retrieval.indexing:shards",
    shard_size="scale.shard_chunks",
)
