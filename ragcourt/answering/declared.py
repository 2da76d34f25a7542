"""The params keys answering reads, declared by every stage that answers the systems (the
answer stage, the race): one list, so a key answering starts to read is declared once."""

from __future__ import annotations

ANSWERING_PARAMS: tuple[str, ...] = (
    "systems_file",
    "llm",
    # what retrieving takes (not the metrics' ks and relevance rule)
    "retrieval.retrievers",
    "retrieval.rrf_k",
    "retrieval.depth",
    "retrieval.bm25",
    "retrieval.settings",
    # which controls answer, and their seed (not the validity check's bootstrap)
    "controls.kinds",
    "controls.base",
    "controls.seed",
    "limits",
    "failure",
    "chunkings",
    "embedders",
    "chunk_tokenizer",
)
