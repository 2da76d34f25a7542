"""A small extractive RAG system with no language model, shared by the examples.

What it is, honestly: ragcourt's own BM25 retriever (same ``retrieval.bm25`` settings as
params.yaml) over ``data/chunks/<chunking>.parquet``, then the answer is the sentence of the
best passages that shares the most content words with the question (ties: the earlier
passage). With no content word in common it answers ``NO-RESPONSE`` (ragcourt's abstention
token). It is a baseline that runs offline in milliseconds, there to show the three ways of
plugging a system into ragcourt; swap ``answer_from`` for an LLM call in a real system.

Calls may come from several threads at once (ragcourt runs ``concurrency`` calls in parallel;
FastAPI runs sync endpoints in a thread pool), so the shared index is opened once under a lock.
"""

from __future__ import annotations

import re
import threading
from typing import Any

import polars as pl

from ragcourt.core import catalog
from ragcourt.core.io import read_table
from ragcourt.orchestration.params import load_params
from ragcourt.retrieval.retrieve import BM25Retriever, open_bm25

ABSTAIN = "NO-RESPONSE"
_WORD = re.compile(r"[A-Za-z0-9]+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_STOP_WORDS = """a an and are as at be by did do does for from had has have how in is it its of
on or say says said text that the their there this to was were what when where which who whom
whose why with"""
_STOP = frozenset(_STOP_WORDS.split())


def content_words(text: str) -> set[str]:
    """Lower-cased words of ``text`` minus a few stop words."""
    return {w for w in (m.lower() for m in _WORD.findall(text)) if w not in _STOP}


def answer_from(question: str, passages: list[str]) -> str:
    """The passage sentence sharing the most content words with the question, or NO-RESPONSE."""
    wanted = content_words(question)
    best, best_score = ABSTAIN, 0
    for text in passages:
        for sentence in _SENTENCE.split(text.strip()):
            score = len(wanted & content_words(sentence))
            if score > best_score:
                best, best_score = sentence.strip(), score
    return best


class ExtractiveRAG:
    """BM25 top-``top_k`` passages + :func:`answer_from`; ``chunking`` defaults to the first
    chunking of params.yaml. Calling it returns ``{"answer", "contexts"}`` (ragcourt's
    Python return contract)."""

    def __init__(
        self, chunking: str | None = None, top_k: int = 3, params_file: str = "params.yaml"
    ) -> None:
        self.params = load_params(params_file)
        self.chunking = chunking or next(iter(self.params.chunkings))
        self.top_k = top_k
        self._lock = threading.Lock()
        self._bm25: BM25Retriever | None = None
        self._chunks: dict[str, dict[str, Any]] = {}

    def _index(self) -> BM25Retriever:
        with self._lock:
            if self._bm25 is None:
                path = catalog.path("chunks", chunking=self.chunking)
                chunks = read_table(path, "chunks")
                self._chunks = {r["chunk_id"]: r for r in chunks.iter_rows(named=True)}
                self._bm25 = open_bm25(self.chunking, self.params)
            return self._bm25

    def retrieve(self, question: str) -> list[dict[str, Any]]:
        """The top passages as ragcourt context objects (text, doc_id, score, offsets)."""
        index = self._index()
        with self._lock:
            run = index.search(pl.DataFrame({"query_id": ["q"], "query": [question]}), self.top_k)
        out = []
        for hit in run.sort("rank").iter_rows(named=True):
            chunk = self._chunks[hit["chunk_id"]]
            out.append(
                {
                    "text": chunk["text"],
                    "doc_id": chunk["doc_id"],
                    "score": hit["score"],
                    "char_start": chunk["char_start"],
                    "char_end": chunk["char_end"],
                }
            )
        return out

    def __call__(self, question: str) -> dict[str, Any]:
        contexts = self.retrieve(question)
        return {
            "answer": answer_from(question, [c["text"] for c in contexts]),
            "contexts": contexts,
        }


_shared: dict[tuple[str | None, int], ExtractiveRAG] = {}
_shared_lock = threading.Lock()


def shared(chunking: str | None = None, top_k: int = 3) -> ExtractiveRAG:
    """One :class:`ExtractiveRAG` per (chunking, top_k) in this process."""
    with _shared_lock:
        key = (chunking, top_k)
        if key not in _shared:
            _shared[key] = ExtractiveRAG(chunking, top_k)
        return _shared[key]
