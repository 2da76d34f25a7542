"""The speech corpus (``../shared/corpora/sotu``) as a throw-away project for the scale
benchmarks: ``replicas`` copies of the first ``max_docs`` speeches, copy k > 0 of a speech
starting with the line ``Copy k.`` so it is not an exact duplicate (ingest would drop it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks._common import SHARED, project_copy, write_params

SOTU = SHARED / "corpora" / "sotu"


def sotu_project(
    prefix: str, replicas: int, max_docs: int | None, embedder: dict[str, Any]
) -> Path:
    """A project folder whose corpus is the replicated speeches, chunking c256, one embedder
    ``minilm`` with the settings ``embedder``."""
    work, params = project_copy(prefix)
    corpus = work / "data" / "corpus"
    corpus.mkdir(parents=True)
    speeches = sorted(SOTU.glob("*.txt"))[:max_docs]
    for k in range(replicas):
        for src in speeches:
            text = src.read_text(encoding="utf-8")
            name = src.name if k == 0 else f"{src.stem}__copy{k}.txt"
            (corpus / name).write_text(text if k == 0 else f"Copy {k}.\n{text}", "utf-8")
    params["corpus"] = {**params.get("corpus", {}), "dir": "data/corpus"}
    params["chunkings"] = {"c256": {"size": 256, "overlap": 32}}
    params["embedders"] = {"minilm": {"model": "all-minilm-l6-v2", **embedder}}
    params.setdefault("qagen", {})["reference_chunking"] = "c256"
    write_params(work, params)
    return work
