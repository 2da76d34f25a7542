"""The ``bm25`` stage: each chunking's BM25 (bm25s) index, saved once and memory-mapped by
every retriever that opens it.

``data/bm25/<chunking>/`` holds bm25s' own save (the eagerly scored term-document matrix as
CSC ``.npy`` arrays, the vocabulary and the BM25 parameters) and ``ragcourt.json``: the
``retrieval.bm25`` settings, the corpus languages (most frequent first: they pick the query
tokenizer), the number of chunks and the sha256 of the chunks file it was built from.
:func:`~ragcourt.retrieval.retrieve.open_saved_bm25` loads it with ``mmap=True`` (the score
arrays stay on disk, paged in as queries touch them, shared by every process on the machine)
when the settings and the chunks file match, so the scores are those of the index built in
memory
(:class:`~ragcourt.retrieval.retrieve.BM25Retriever`, same tokenizers, same bm25s call).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from ragcourt.core import catalog
from ragcourt.core.errors import RagcourtError
from ragcourt.core.fingerprint import file_sha256
from ragcourt.core.io import read_table, write_with
from ragcourt.retrieval.params import BM25Params, RetrievalView
from ragcourt.retrieval.retrieve import (
    BM25_FORMAT,
    BM25_META,
    BM25Retriever,
    bm25_dir,
    chunk_languages,
)

log = logging.getLogger("ragcourt.bm25")


def build(chunking: str, settings: BM25Params) -> BM25Retriever:
    """BM25 over the chunk texts of ``chunking``, each chunk in its document's language."""
    src = catalog.path("chunks", chunking=chunking)
    chunks = read_table(src, "chunks", columns=["chunk_id", "doc_id", "text"])
    if chunks.is_empty():
        raise RagcourtError(f"{src}: no chunks to index")
    return BM25Retriever(
        chunks["chunk_id"].to_list(),
        chunks["text"].to_list(),
        settings,
        languages=chunk_languages(chunks, str(catalog.path("documents"))),
    )


def _meta(retriever: BM25Retriever, settings: BM25Params, chunks: Path) -> dict[str, Any]:
    return {
        "format": BM25_FORMAT,
        "settings": settings.model_dump(mode="json"),
        "corpus_languages": retriever.corpus_languages,
        "n_chunks": len(retriever.chunk_ids),
        "chunks_sha256": file_sha256(chunks),
    }


def save(retriever: BM25Retriever, settings: BM25Params, chunks: Path, folder: Path) -> Path:
    """Write ``retriever``'s index and ``ragcourt.json`` into ``folder``, each file atomically
    (bm25s saves into a sibling temp folder first); files of an older save are removed."""
    folder.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        retriever.model.save(str(tmp), show_progress=False)
        meta = _meta(retriever, settings, chunks)
        (tmp / BM25_META).write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n", "utf-8")
        names = sorted(p.name for p in tmp.iterdir())
        for name in names:
            src = tmp / name
            write_with(folder / name, lambda p, src=src: os.replace(src, p))  # type: ignore[misc]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for old in folder.iterdir():
        if old.is_file() and old.name not in names and not old.name.startswith("."):
            old.unlink()
    return folder


def run(params: RetrievalView, chunking: str) -> Path:
    """Build and save the BM25 index of data/chunks/<chunking>.parquet (reads only
    ``retrieval.bm25``: a chunking without its chunks file is a one-line error)."""
    settings = params.retrieval.bm25
    retriever = build(chunking, settings)
    out = save(retriever, settings, catalog.path("chunks", chunking=chunking), bm25_dir(chunking))
    log.info(
        "bm25 %s: %d chunks, %d terms, languages %s",
        chunking, len(retriever.chunk_ids), len(retriever.model.vocab_dict),
        ", ".join(retriever.corpus_languages),
    )  # fmt: skip
    return out
