"""Which systems' retrieval is not judged (no passages at all), and which UDCG rows count
for the failure policy."""

from __future__ import annotations

import polars as pl

from ragcourt.answering.external.replies import Passage, Reply
from ragcourt.answering.external.rows import answer_row, rows_frame
from ragcourt.answering.generation import ANSWER_SCHEMA
from ragcourt.core.provenance import NO_CONTEXTS_SUPPLIED, NO_RETRIEVED_PASSAGES
from ragcourt.judging.retrieval_skips import (
    NO_RETRIEVAL_JUDGING,
    retrieval_not_judged,
    systems_without_passages,
)
from ragcourt.judging.retrieval_stage import judged_udcg_rows


def _builtin(system: str, qid: str, n_passages: int) -> dict[str, object]:
    hit = {"chunk_id": "c:d:0", "rank": 1, "score": 1.0, "doc_id": "d", "char_start": 0,
           "char_end": 4, "text": "text"}  # fmt: skip
    return {"system": system, "question_id": qid, "answer": "a", "abstained": False,
            "retrieved": [hit] * n_passages, "query_variants": [], "latency_s": 0.1,
            "prompt_tokens": 1, "completion_tokens": 1, "model": "scripted/x",
            "error": None}  # fmt: skip


def test_systems_without_any_passage_are_not_judged() -> None:
    builtin = [_builtin("bm25", "q1", 2), _builtin("bm25", "q2", 0)]  # judged: one has some
    closed = [_builtin("closed-book", "q1", 0), _builtin("closed-book", "q2", 0)]
    answers = pl.concat(
        [
            pl.DataFrame(builtin + closed, schema=ANSWER_SCHEMA),
            rows_frame(
                [
                    answer_row("chat", "external:http", "q1", Reply("x"), 0.1),
                    answer_row("chat", "external:http", "q2", Reply("y"), 0.1),
                    answer_row("ctx", "external:python", "q1", Reply("x", (Passage("p"),)), 0.1),
                    answer_row("ctx", "external:python", "q2", Reply("y"), 0.1),
                ]
            ),
        ]
    )
    assert systems_without_passages(answers) == ["closed-book", "chat"]
    assert retrieval_not_judged(answers) == {
        "closed-book": NO_RETRIEVAL_JUDGING,
        "chat": NO_RETRIEVAL_JUDGING,
    }
    assert systems_without_passages(answers.head(0)) == []


def test_rows_without_passages_are_not_failed_calls() -> None:
    udcg = pl.DataFrame(
        {
            "system": ["a", "a", "a", "a"],
            "error": [None, NO_CONTEXTS_SUPPLIED, NO_RETRIEVED_PASSAGES, "relevance call failed"],
        }
    )
    kept = judged_udcg_rows(udcg)
    assert kept["error"].to_list() == [None, "relevance call failed"]
