"""Anthropic prompt-caching breakpoints on the shared system message, and nothing else."""

from __future__ import annotations

from ragcourt.llm import ChatRequest
from ragcourt.llm.cache import cache_key
from ragcourt.llm.prompt_caching import provider_messages

TURNS = (("system", "Judge the passage."), ("user", "the passage"))


def test_anthropic_system_message_carries_an_ephemeral_cache_breakpoint() -> None:
    sent = provider_messages("anthropic/claude-3-5-haiku-latest", TURNS)
    assert sent[0] == {
        "role": "system",
        "content": [
            {"type": "text", "text": "Judge the passage.", "cache_control": {"type": "ephemeral"}}
        ],
    }
    assert sent[1] == {"role": "user", "content": "the passage"}


def test_other_providers_and_prompts_without_a_system_message_are_sent_as_they_are() -> None:
    plain = [{"role": r, "content": c} for r, c in TURNS]
    assert provider_messages("openai/gpt-4o-mini", TURNS) == plain
    assert provider_messages("local/smollm2-135m", TURNS) == plain
    user_only = (("user", "hi"),)
    assert provider_messages("anthropic/x", user_only) == [{"role": "user", "content": "hi"}]
    empty = (("system", ""), ("user", "hi"))
    assert provider_messages("anthropic/x", empty)[0] == {"role": "system", "content": ""}


def test_the_reply_cache_key_does_not_see_the_breakpoint() -> None:
    req = ChatRequest(model="anthropic/x", messages=TURNS)
    before = cache_key(req)
    provider_messages(req.model, req.messages)
    assert cache_key(req) == before
    assert req.messages == TURNS  # the request itself is not changed
