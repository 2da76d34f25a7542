"""The ``chunk`` stage: ``python -m stages chunk`` under DVC, a task in the Prefect flow."""

from __future__ import annotations

from ragcourt.orchestration.stage_def import StageDef, arts

STAGE = StageDef(
    "chunk",
    "ragcourt.corpus.chunking:run",
    "Token chunks with char offsets, one stage per chunking config. Each ChunkSpec\n"
    "field is tracked as its own dotted key: DVC's run-cache key drops every dict key\n"
    'literally named "size", so tracking the dict would let a size change restore\n'
    "stale chunks.",
    deps=arts("documents"),
    params=("chunk_tokenizer", "chunkings.{chunking}.size", "chunkings.{chunking}.overlap"),
    partition=("chunking",),
)
