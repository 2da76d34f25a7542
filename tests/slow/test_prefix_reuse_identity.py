"""Prompt-prefix reuse in the local provider changes no reply (real SmolLM2-135M model).

The same judge-like requests (a shared instruction + question, different passages) run with
``prefix_reuse`` off and on: greedy texts, per-token logprobs and next-token candidate
probabilities must be exactly equal (no tolerance: the provider evaluates every prompt in
batches of at least 2 tokens, which makes a token's KV state independent of how its prompt
was split; see ``ragcourt.llm.local_provider``), and the "on" run must really reuse prefixes.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ragcourt.llm import ChatRequest, Gateway
from ragcourt.llm.accounting import reset_accounts
from ragcourt.llm.local_provider import get_model
from ragcourt.llm.params import LLMParams
from ragcourt.llm.types import ChatResult, TokenDistribution

MODEL = "local/smollm2-135m"
SYSTEM = "You judge whether a passage helps answer a question. Reply with 0, 1 or 2."
QUESTION = "Question: Which river flows through Paris?\nPassage: "
PASSAGES = [
    "The Seine flows through Paris before reaching the English Channel.",
    "Lyon lies where the Rhone meets the Saone.",
    "Paris is the capital of France and its largest city.",
    "Bread is baked in ovens.",
    "The Seine",  # short: the evaluated suffix is only a few tokens
]


@pytest.fixture(autouse=True)
def _accounts() -> Iterator[None]:
    reset_accounts()
    yield
    reset_accounts()


def _requests() -> tuple[list[ChatRequest], list[ChatRequest]]:
    chats = [
        ChatRequest.of(MODEL, SYSTEM, QUESTION + p, max_tokens=8, temperature=0.0, top_logprobs=3)
        for p in PASSAGES
    ]
    chats.append(chats[0])  # the first prompt again: at most len - 2 tokens reused
    verdicts = [ChatRequest.of(MODEL, SYSTEM, QUESTION + p + "\nScore:") for p in PASSAGES]
    return chats, verdicts


def _repairs(chats: list[ChatRequest], replies: list[ChatResult]) -> list[ChatRequest]:
    """Each prompt extended by its own reply and a follow-up turn (a structured-output repair):
    the reply's tokens were generated one at a time, so their KV state must never be reused."""
    return [
        req.model_copy(
            update={
                "messages": (*req.messages, ("assistant", res.text), ("user", "One digit only.")),
                "max_tokens": 4,
                "top_logprobs": 0,
            }
        )
        for req, res in zip(chats, replies, strict=True)
    ]


def _run(
    tmp_path: Path, reuse: bool
) -> tuple[list[ChatResult], list[TokenDistribution], dict[str, Any]]:
    params = LLMParams(
        cache=False,
        cache_dir=str(tmp_path / f"cache_{reuse}"),
        metrics_dir=str(tmp_path / "m"),
        prefix_reuse=reuse,
    )
    gw = Gateway(params, stage=f"t_prefix_{reuse}")
    chats, verdicts = _requests()
    results = gw.chat(chats)
    results += gw.chat(_repairs(chats, results))
    dists = gw.next_token_probs(verdicts, ["0", "1", "2"])
    return results, dists, gw.account.as_dict()["total"]


def test_prefix_reuse_changes_no_reply_or_probability(tmp_path: Path) -> None:
    off, off_d, off_acc = _run(tmp_path, reuse=False)
    on, on_d, on_acc = _run(tmp_path, reuse=True)

    assert all(r.ok for r in off + on) and all(d.ok for d in off_d + on_d)
    assert [r.text for r in on] == [r.text for r in off]
    assert [r.finish_reason for r in on] == [r.finish_reason for r in off]
    for a, b in zip(on, off, strict=True):
        assert a.logprobs == b.logprobs  # token, logprob and top-3 alternatives, exactly
    assert [d.raw for d in on_d] == [d.raw for d in off_d]  # exact floats, no tolerance
    assert [d.probs for d in on_d] == [d.probs for d in off_d]

    assert off_acc["prefix_hit_tokens"] == 0
    assert off_acc["evaluated_tokens"] == off_acc["prompt_tokens"]
    assert on_acc["prompt_tokens"] == off_acc["prompt_tokens"]
    # the passages share the instruction + question prefix: most prompt tokens are reused
    assert on_acc["prefix_hit_tokens"] > on_acc["prompt_tokens"] // 2
    assert on_acc["evaluated_tokens"] == on_acc["prompt_tokens"] - on_acc["prefix_hit_tokens"]
    assert on and all(r.prefix_hit_tokens <= r.prompt_tokens - 2 for r in on)


def _last_logits_after(steps: list[list[int]], final: list[int]) -> np.ndarray:
    """Evaluate ``steps`` (each reusing what it can, a 1-token list standing for one generated
    token, evaluated as generation does), then ``final`` with reuse; the last logits."""
    lm = get_model(MODEL, None)
    with lm.lock:
        for ids in steps:
            if len(ids) == 1:
                lm.llm.eval(ids)  # a generated token: Llama.generate evaluates it alone
            else:
                lm.eval_prompt(ids, reuse=True)
        lm.eval_prompt(final, reuse=True)
        return lm.last_logits()


def test_reuse_avoids_the_kv_states_that_would_change_logits() -> None:
    """Two splits measured to change the logits (by 0.4-0.5) when llama.cpp evaluates a token
    in a 1-token batch: a reused generated token, and a 1-token suffix. The provider's
    reuse must give exactly the logits of a from-scratch evaluation in both."""
    lm = get_model(MODEL, None)
    text = "Instructions: judge the relevance of a passage to a question. Reply with a score. "
    ids = lm.llm.tokenize((text * 40).encode(), add_bos=False, special=True)[:300]
    with lm.lock:
        lm.eval_prompt(ids, reuse=False)
        fresh = lm.last_logits()
    after_generated = _last_logits_after([ids[:150], ids[150:151]], ids)
    assert np.array_equal(after_generated, fresh)
    after_short_suffix = _last_logits_after([ids[:297], ids[:299]], ids)
    assert np.array_equal(after_short_suffix, fresh)
