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

import pytest

from ragcourt.core.params import LLMParams
from ragcourt.llm import ChatRequest, Gateway
from ragcourt.llm.accounting import reset_accounts
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
    # a prompt extending an earlier prompt and its reply (a structured-output repair turn):
    # the reply's tokens were generated one at a time, so they must never be reused
    repair = ChatRequest(
        model=MODEL,
        messages=(
            ("system", SYSTEM),
            ("user", QUESTION + PASSAGES[0]),
            ("assistant", "2"),
            ("user", "Reply with one digit only."),
        ),
        max_tokens=4,
        temperature=0.0,
    )
    chats += [repair, chats[0]]  # and the first prompt again (at most len - 2 reused)
    verdicts = [ChatRequest.of(MODEL, SYSTEM, QUESTION + p + "\nScore:") for p in PASSAGES]
    return chats, verdicts


def _run(tmp_path: Path, reuse: bool) -> tuple[list[ChatResult], list[TokenDistribution], dict]:
    params = LLMParams(
        cache=False,
        cache_dir=str(tmp_path / f"cache_{reuse}"),
        metrics_dir=str(tmp_path / "m"),
        prefix_reuse=reuse,
    )
    gw = Gateway(params, stage=f"t_prefix_{reuse}")
    chats, verdicts = _requests()
    results = gw.chat(chats)
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
    assert all(r.prefix_hit_tokens <= r.prompt_tokens - 2 for r in on)
