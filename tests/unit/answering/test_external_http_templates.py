"""HTTP systems without a network: structural templating (no JSON injection), dotted reply
paths, the openai_chat shortcut, header secrets and their scrubbing."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragcourt.answering.external.http_endpoint import fill, json_at, parse_reply, request_plan
from ragcourt.answering.external.replies import Passage, ReplyError
from ragcourt.answering.external.secrets import REDACTED, Scrubber, resolve_headers
from ragcourt.answering.external.specs import HttpSpec
from ragcourt.core.errors import ConfigError

TEMPLATE = {
    "input": {"text": "Q: {question}", "id": "{question_id}"},
    "list": ["{question}", 3, None, True],
    "{question}": "keys are not templates",
    "literal": "{other} stays",
}


@given(question=st.text(), qid=st.text(min_size=1))
def test_fill_is_structural_whatever_the_text(question: str, qid: str) -> None:
    body = fill(TEMPLATE, {"question": question, "question_id": qid})
    assert json.loads(json.dumps(body)) == body  # always valid JSON, never re-parsed text
    assert body["input"] == {"text": f"Q: {question}", "id": qid}
    assert body["list"] == [question, 3, None, True]
    assert body["{question}"] == "keys are not templates"
    assert body["literal"] == "{other} stays"


def test_fill_with_hostile_question() -> None:
    q = '", "admin": true, "x": "{question_id} \\ }'
    body = fill({"q": "{question}"}, {"question": q, "question_id": "id-1"})
    assert body == {"q": q}  # one pass: the question's own "{question_id}" is not replaced
    assert json.loads(json.dumps(body))["q"] == q


def test_json_at_keys_and_indices() -> None:
    data = {"choices": [{"message": {"content": "hi"}}], "a": {"b": None}}
    assert json_at(data, "choices.0.message.content") == "hi"
    assert json_at(data, "a.b") is None
    with pytest.raises(
        ReplyError, match=r"reply has no 'choices.1.message' \(no '1' under choices\)"
    ):
        json_at(data, "choices.1.message")
    with pytest.raises(ReplyError, match=r"no 'x' under <root>"):
        json_at(data, "x")


def _spec(**kw: object) -> HttpSpec:
    base: dict[str, object] = {
        "name": "s",
        "kind": "http",
        "url": "http://h/ask",
        "body": {"q": "{question}"},
        "answer_path": "out.answer",
    }
    return HttpSpec.model_validate({**base, **kw})


def test_parse_reply_with_and_without_context_fields() -> None:
    plain = request_plan(_spec(contexts_path="out.ctx"))
    reply = parse_reply({"out": {"answer": "A", "ctx": ["p1", {"text": "p2"}]}}, plain)
    assert reply.answer == "A" and reply.contexts == (Passage("p1"), Passage("p2"))
    assert parse_reply({"out": {"answer": "A", "ctx": None}}, plain).contexts == ()
    mapped = request_plan(
        _spec(contexts_path="hits", context_fields={"text": "doc.body", "score": "rel"})
    )
    reply = parse_reply(
        {"out": {"answer": "A"}, "hits": [{"doc": {"body": "B"}, "rel": 2}]}, mapped
    )
    assert reply.contexts == (Passage("B", score=2.0),)
    with pytest.raises(ReplyError, match=r"'out\.answer' must be a string"):
        parse_reply({"out": {"answer": 5}}, plain)


def test_openai_chat_shortcut_expands() -> None:
    spec = HttpSpec.model_validate(
        {
            "name": "c",
            "kind": "http",
            "openai_chat": {
                "base_url": "http://h/v1/",
                "model": "m",
                "api_key_env": "K",
                "system_prompt": "Be brief.",
                "max_tokens": 50,
            },
        }
    )
    plan = request_plan(spec)
    assert (plan.method, plan.url, plan.answer_path) == (
        "POST",
        "http://h/v1/chat/completions",
        "choices.0.message.content",
    )
    assert plan.headers == {"Authorization": "Bearer ${env:K}"}
    body = fill(plan.body, {"question": "Why?", "question_id": "q"})
    assert body == {
        "model": "m",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Why?"},
        ],
        "temperature": 0.0,
        "max_tokens": 50,
    }


def test_resolve_headers_and_scrub() -> None:
    env = {"KEY": "sk-live-123", "TOKEN": "tok"}
    sent, scrub = resolve_headers(
        {"Authorization": "Bearer ${env:KEY}", "X-Trace": "plain"}, {"X-Token": "TOKEN"}, "w", env
    )
    assert sent == {"Authorization": "Bearer sk-live-123", "X-Trace": "plain", "X-Token": "tok"}
    assert scrub("echo: Bearer sk-live-123 / tok") == f"echo: Bearer {REDACTED} / {REDACTED}"
    with pytest.raises(ConfigError, match=r"w: header 'Authorization' needs environment variable"):
        resolve_headers({"Authorization": "Bearer ${env:MISSING}"}, {}, "w", env)
    with pytest.raises(ConfigError, match=r"header 'X-Token' needs environment variable EMPTY"):
        resolve_headers({}, {"X-Token": "EMPTY"}, "w", {"EMPTY": ""})
    assert Scrubber.of(["ab", "abc"])("xabcx ab") == f"x{REDACTED}x {REDACTED}"
