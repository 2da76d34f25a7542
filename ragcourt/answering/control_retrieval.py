"""Passages of the control retrievers (spec §3): ``oracle``, ``random``, ``none``.

* ``oracle``: the chunks (of the system's chunking) of the question's source document that
  overlap its ground-truth span ``[char_start, char_end)``, ranked by overlap
  ``o = max(0, min(chunk_end, span_end) - max(chunk_start, span_start))`` (ties: earlier chunk
  first), score ``o / (span_end - span_start)``; the system keeps the first ``top_k`` (at least
  one exists, else the question is an error row, never a closed-book answer).
* ``random``: ``min(depth, #chunks)`` distinct chunks drawn uniformly from the chunking, in
  draw order, by ``numpy.random.default_rng(s)`` with ``s`` = the first 8 bytes of
  sha256("<controls.seed>:<question_id>"): the same in every run and process, different
  across questions.
* ``none``: closed book, no passage (the prompt's ``no_passages`` text is sent instead).
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
import polars as pl

from ragcourt.answering.params import AnsweringView
from ragcourt.answering.partitions import chunks_path
from ragcourt.answering.retrieval_groups import HIT_COLS, GroupRetrieval
from ragcourt.answering.retrieval_key import RetrievalKey
from ragcourt.answering.retriever_kinds import CONTROL_RETRIEVERS
from ragcourt.core.io import read_table
from ragcourt.core.schemas import RETRIEVED
from ragcourt.retrieval.span_relevance import overlap

# a retrieved passage's fields (the answers table's ``retrieved`` struct) and its query
_HIT_SCHEMA: dict[str, Any] = {"query_id": pl.String} | {f.name: f.dtype for f in RETRIEVED.fields}


def question_seed(seed: int, question_id: str) -> int:
    """The per-question seed: first 8 bytes of sha256("<seed>:<question_id>") as an int."""
    digest = hashlib.sha256(f"{seed}:{question_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def oracle_hits(
    qa: pl.DataFrame, chunks: pl.DataFrame, depth: int
) -> tuple[pl.DataFrame, dict[str, str]]:
    """Hits (query_id + HIT_COLS) of the chunks overlapping each span, and error reasons of
    questions without a span or without an overlapping chunk."""
    by_doc: dict[str, list[dict[str, Any]]] = {}
    for c in chunks.select("chunk_id", "doc_id", "char_start", "char_end", "text").iter_rows(
        named=True
    ):
        by_doc.setdefault(c["doc_id"], []).append(c)
    rows: list[dict[str, Any]] = []
    errors: dict[str, str] = {}
    for q in qa.select("question_id", "doc_id", "char_start", "char_end").iter_rows(named=True):
        qid, doc, start, end = q["question_id"], q["doc_id"], q["char_start"], q["char_end"]
        if doc is None or start is None or end is None or end <= start:
            errors[qid] = "oracle: the QA item has no ground-truth document span"
            continue
        scored = [
            (overlap(c["char_start"], c["char_end"], start, end), c) for c in by_doc.get(doc, [])
        ]
        scored = sorted(
            ((o, c) for o, c in scored if o > 0), key=lambda oc: (-oc[0], oc[1]["char_start"])
        )
        if not scored:
            errors[qid] = f"oracle: no chunk of document '{doc}' overlaps span [{start}:{end}]"
            continue
        for rank, (o, c) in enumerate(scored[:depth], start=1):
            rows.append({"query_id": qid, **c, "rank": rank, "score": o / (end - start)})
    return pl.DataFrame(rows, schema=_HIT_SCHEMA).select("query_id", *HIT_COLS), errors


def random_hits(qa: pl.DataFrame, chunks: pl.DataFrame, depth: int, seed: int) -> pl.DataFrame:
    """Hits of ``min(depth, #chunks)`` chunks drawn per question (rule in the module docstring)."""
    table = chunks.select("chunk_id", "doc_id", "char_start", "char_end", "text").sort("chunk_id")
    pool = table.to_dicts()
    n = min(depth, len(pool))
    rows: list[dict[str, Any]] = []
    for qid in qa["question_id"].to_list():
        rng = np.random.default_rng(question_seed(seed, qid))
        picks = rng.choice(len(pool), size=n, replace=False).tolist() if n else []
        for rank, i in enumerate(picks, start=1):
            rows.append({"query_id": qid, **pool[int(i)], "rank": rank, "score": 0.0})
    return pl.DataFrame(rows, schema=_HIT_SCHEMA).select("query_id", *HIT_COLS)


def control_group(key: RetrievalKey, qa: pl.DataFrame, params: AnsweringView) -> GroupRetrieval:
    """The :class:`GroupRetrieval` of a control retriever (no index, no model call)."""
    return CONTROL_RETRIEVERS.get(key.retriever, "retriever")(key, qa, params)


@CONTROL_RETRIEVERS.register("none")
def _none(key: RetrievalKey, qa: pl.DataFrame, params: AnsweringView) -> GroupRetrieval:
    empty = pl.DataFrame(schema=_HIT_SCHEMA).select("query_id", *HIT_COLS)
    return GroupRetrieval(key, empty, None, 0.0)


@CONTROL_RETRIEVERS.register("oracle")
def _oracle(key: RetrievalKey, qa: pl.DataFrame, params: AnsweringView) -> GroupRetrieval:
    hits, errors = oracle_hits(qa, read_table(chunks_path(key.chunking), "chunks"), key.depth)
    return GroupRetrieval(key, hits, None, 0.0, errors)


@CONTROL_RETRIEVERS.register("random")
def _random(key: RetrievalKey, qa: pl.DataFrame, params: AnsweringView) -> GroupRetrieval:
    chunks = read_table(chunks_path(key.chunking), "chunks")
    hits = random_hits(qa, chunks, key.depth, params.controls.seed)
    return GroupRetrieval(key, hits, None, 0.0)
