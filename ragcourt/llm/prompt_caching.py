"""Provider-side prompt caching hints on the messages sent to litellm (not the reply cache).

Judge prompts keep the fixed instructions in the leading system message and the variable
data after it, so a provider can reuse the shared prefix. OpenAI-compatible servers do so
on their own; Anthropic needs an explicit breakpoint: for ``anthropic/...`` models the
leading non-empty system message is sent as one text block with
``cache_control: {"type": "ephemeral"}`` (litellm passes it through). Only the wire format
changes: the reply-cache key is computed from the ``ChatRequest``, never from these dicts,
and a prefix shorter than Anthropic's minimum is simply not cached.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragcourt.llm.providers import provider_of

CACHE_CONTROL_PROVIDERS = ("anthropic",)
EPHEMERAL: dict[str, str] = {"type": "ephemeral"}


def provider_messages(model: str, messages: Sequence[tuple[str, str]]) -> list[dict[str, Any]]:
    """litellm ``messages`` for ``(role, content)`` turns; see the module docstring."""
    out: list[dict[str, Any]] = [{"role": r, "content": c} for r, c in messages]
    if provider_of(model) in CACHE_CONTROL_PROVIDERS and out:
        first = out[0]
        if first["role"] == "system" and first["content"]:
            first["content"] = [
                {"type": "text", "text": first["content"], "cache_control": dict(EPHEMERAL)}
            ]
    return out
