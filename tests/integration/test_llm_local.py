"""Smoke tests with the real embedded local model (SmolLM2-135M GGUF via llama-cpp-python)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel

from ragcourt.llm import ChatRequest, Gateway
from ragcourt.llm.accounting import reset_accounts
from ragcourt.llm.params import LLMParams

MODEL = "local/smollm2-135m"


@pytest.fixture
def gw(tmp_path: Path) -> Iterator[Gateway]:
    reset_accounts()
    params = LLMParams(cache_dir=str(tmp_path / "cache"), metrics_dir=str(tmp_path / "m"))
    yield Gateway(params, stage="t_local")
    reset_accounts()


def test_local_answer_distribution_and_cache_hit(gw: Gateway) -> None:
    req = ChatRequest.of(MODEL, "Answer briefly.", "What is the capital of France?", max_tokens=12)
    [res] = gw.chat([req])
    assert res.ok and res.text.strip() and not res.cached
    assert 0 < res.completion_tokens <= 12 and res.prompt_tokens > 5 and res.cost_usd == 0.0

    verdict = ChatRequest.of(
        MODEL, None, "Is Paris in France? Reply A for yes, B for no, C for unsure.", max_tokens=1
    )
    [d] = gw.next_token_probs([verdict], ["A", "B", "C"])
    assert d.ok and d.method == "logits" and d.fallback == []
    assert set(d.probs) == {"A", "B", "C"}
    assert math.isclose(sum(d.probs.values()), 1.0, rel_tol=1e-9)
    assert all(0 < d.raw[c] < 1 for c in "ABC") and sum(d.raw.values()) <= 1.0
    assert d.candidate_tokens == {"A": "A", "B": "B", "C": "C"}

    calls_before = gw.account.as_dict()["total"]["model_calls"]
    [again] = gw.chat([req])
    [d2] = gw.next_token_probs([verdict], ["A", "B", "C"])
    assert again.cached and again.text == res.text
    assert d2.cached and d2.probs == d.probs
    assert gw.account.as_dict()["total"]["model_calls"] == calls_before  # zero model calls


def test_local_logprobs_are_openai_shaped_and_seeded(gw: Gateway) -> None:
    req = ChatRequest.of(MODEL, None, "Name a colour.", max_tokens=3, top_logprobs=3)
    [res] = gw.chat([req])
    assert res.ok and res.logprobs is not None and len(res.logprobs) == res.completion_tokens
    first = res.logprobs[0]
    assert first.logprob <= 0 and len(first.top_logprobs) == 3
    assert first.top_logprobs[0].logprob >= first.top_logprobs[-1].logprob
    assert first.token == first.top_logprobs[0].token  # greedy picks the top token
    assert "".join(p.token for p in res.logprobs) == res.text

    warm = ChatRequest.of(MODEL, None, "Write a word.", max_tokens=6, temperature=1.5, seed=7)
    gw.cache.enabled = False
    a, b = gw.chat([warm, warm])
    c = gw.chat([warm.model_copy(update={"seed": 8})])[0]
    assert a.text == b.text  # same seed, same sample
    assert c.text != a.text  # another seed, another sample


class Score(BaseModel):
    score: int


def test_local_structured_uses_json_grammar(gw: Gateway) -> None:
    req = ChatRequest.of(
        MODEL, None, 'Rate Paris from 1 to 5. Reply as JSON {"score": n}.', max_tokens=16
    )
    [res] = gw.structured([req], Score)
    assert res.ok and res.value is not None and res.attempts == 1


def test_local_stop_strings_and_context_overflow_error_row(gw: Gateway) -> None:
    base = ChatRequest.of(MODEL, "Answer briefly.", "What is the capital of France?", max_tokens=12)
    [full] = gw.chat([base])
    words = full.text.split(" ")
    assert full.ok and len(words) > 3
    stop = " " + words[2]  # greedy decoding: the same text again, cut before this word
    [cut] = gw.chat([base.model_copy(update={"stop": (stop,)})])
    assert cut.ok and cut.finish_reason == "stop" and cut.text == full.text[: full.text.index(stop)]
    # the stop-string token(s) are trimmed from logprobs and completion_tokens (OpenAI format)
    [cut_lp] = gw.chat([base.model_copy(update={"stop": (stop,), "top_logprobs": 2})])
    assert cut_lp.text == cut.text and cut_lp.logprobs is not None
    assert len(cut_lp.logprobs) == cut_lp.completion_tokens == cut.completion_tokens
    assert "".join(p.token for p in cut_lp.logprobs) == cut.text
    assert cut.completion_tokens < full.completion_tokens
    [over] = gw.chat([ChatRequest.of(MODEL, None, "word " * 9000, max_tokens=4)])
    assert not over.ok and over.attempts == 1  # a local failure is deterministic: no retry
    assert over.error is not None and "ContextWindowExceeded" in over.error
