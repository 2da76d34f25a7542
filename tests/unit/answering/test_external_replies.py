"""The reply contract of external systems: answers, contexts, retrieved structs, rows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import polars as pl
import pytest
from langchain_core.documents import Document

from ragcourt.answering.external.replies import (
    Passage,
    Reply,
    ReplyError,
    passages_from,
    reply_from,
    retrieved_rows,
)
from ragcourt.answering.external.rows import answer_row, error_row, merge_previous, rows_frame
from ragcourt.core.schemas import check


@dataclass
class Obj:
    answer: Any
    contexts: Any = None


def test_return_contract_str_mapping_object() -> None:
    assert reply_from("Paris") == Reply("Paris")
    r = reply_from({"answer": "Paris", "contexts": ["p1", {"text": "p2", "score": 2}], "x": 1})
    assert r.contexts == (Passage("p1"), Passage("p2", score=2.0))
    assert reply_from(Obj("Paris", ["p"])).contexts == (Passage("p"),)
    assert reply_from({"answer": "a", "cost_usd": 0.25}).cost_usd == 0.25


@pytest.mark.parametrize(
    ("value", "needle"),
    [
        (42, "returned int; expected a str"),
        ({"text": "x"}, "without 'answer'"),
        ({"answer": None}, "'answer' must be a string"),
        ({"answer": "a", "context": ["p"]}, "the key for passages is 'contexts'"),
        ({"answer": "a", "contexts": "one passage"}, "contexts: must be a list"),
        ({"answer": "a", "contexts": [3]}, "contexts[0]: a context must be a string"),
        ({"answer": "a", "contexts": [{"txt": "p"}]}, "unknown key(s) ['txt']"),
        ({"answer": "a", "contexts": [{"text": " "}]}, "'text' must be a non-empty string"),
        ({"answer": "a", "contexts": [{"text": "p", "score": "high"}]}, "contexts[0].score"),
        (
            {"answer": "a", "contexts": [{"text": "p", "char_start": 5, "char_end": 2}]},
            "< char_end",
        ),
        ({"answer": "a", "contexts": [{"text": "p", "doc_id": 7}]}, "contexts[0].doc_id"),
        ({"answer": "a", "cost_usd": -1}, "cost_usd: must be >= 0"),
    ],
)
def test_contract_violations_name_the_field(value: Any, needle: str) -> None:
    with pytest.raises(ReplyError) as err:
        reply_from(value)
    assert needle in str(err.value)


def test_langchain_documents_become_passages() -> None:
    docs = [
        Document(page_content="The line opened in 1863.", metadata={"doc_id": "d1", "score": 3}),
        {"page_content": "dict form", "metadata": {"char_start": 4, "char_end": 9}, "type": "x"},
    ]
    assert passages_from(docs) == (
        Passage("The line opened in 1863.", doc_id="d1", score=3.0),
        Passage("dict form", char_start=4, char_end=9),
    )


def test_retrieved_rows_and_answer_rows_fit_the_answers_schema() -> None:
    reply = Reply(" 1863 ", (Passage("p0", doc_id="d", score=0.5), Passage("p1")), cost_usd=0.1)
    hits = retrieved_rows("sys", "q7", reply.contexts)
    assert [(h["chunk_id"], h["rank"], h["score"], h["doc_id"]) for h in hits] == [
        ("ext:sys:q7:0", 1, 0.5, "d"),
        ("ext:sys:q7:1", 2, None, None),
    ]
    rows = [
        answer_row("sys", "external:python", "q7", reply, 0.2),
        answer_row("sys", "external:python", "q8", Reply("NO-RESPONSE"), 0.1),
        answer_row("sys", "external:python", "q9", Reply("   "), 0.1),
        error_row("sys", "external:python", "q10", "boom"),
    ]
    df = rows_frame(rows)
    check(df, "answers", "test")
    assert df["answer"].to_list() == ["1863", "NO-RESPONSE", None, None]
    assert df["abstained"].to_list() == [False, True, None, None]
    assert df["error"].to_list() == [None, None, "returned an empty answer", "boom"]
    assert df["retrieved"].list.len().to_list() == [2, 0, 0, 0]
    assert df["prompt_tokens"].null_count() == 4  # not known for an external system


def test_scrub_reaches_answer_and_contexts() -> None:
    reply = Reply("key=SECRET", (Passage("has SECRET inside"),))
    row = answer_row("s", "external:http", "q", reply, 0.0, lambda t: t.replace("SECRET", "*"))
    assert row["answer"] == "key=*" and row["retrieved"][0]["text"] == "has * inside"


def test_merge_previous_keeps_answered_rows_only() -> None:
    prev = rows_frame(
        [
            answer_row("s", "m", "q1", Reply("old"), 1.0),
            error_row("s", "m", "q2", "failed"),
        ]
    )
    fresh = {"q2": answer_row("s", "m", "q2", Reply("new"), 2.0)}
    rows = merge_previous(["q1", "q2"], fresh, prev)
    assert [r["answer"] for r in rows] == ["old", "new"]
    assert rows_frame(rows).filter(pl.col("error").is_not_null()).height == 0
