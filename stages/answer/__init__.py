"""The ``answer`` stage: ``python -m stages answer`` under DVC, a task in the Prefect flow."""

from __future__ import annotations

from ragcourt.answering.declared import ANSWERING_PARAMS
from ragcourt.orchestration.stage_def import EMBEDDERS, LLMS, Dep, EntryOption, StageDef, art

STAGE = StageDef(
    "answer",
    "ragcourt.answering.stage:run",
    "Every candidate system answers every question. DVC keeps data/answers between\n"
    "runs (persist), so each system's partition is reused when its config hash and the\n"
    "QA hash match: adding one system answers only that system.",
    deps=(
        art("llm_routes"),
        Dep(param="systems_file"),
        Dep(prompts="answer"),
        art("qa"),
        art("documents"),  # document languages pick the BM25 tokenizers
        art("chunks", chunking="$chunking"),
        art("bm25_index", chunking="$chunking"),
        art("embeddings", chunking="$chunking", embedder="$embedder"),
        art("index", chunking="$chunking", embedder="$embedder"),
    ),
    params=(*ANSWERING_PARAMS, "scale.shard_questions"),
    models=(EMBEDDERS, LLMS),
    partition=("system",),
    llm_metrics=True,
    shards="ragcourt.answering.stage:shards",
    options=(EntryOption("systems", "only (re)compute these systems' partitions", nargs="+"),),
)
