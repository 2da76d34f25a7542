"""The in-process local model called directly, without litellm.

The same provider code and arguments as through ``litellm.acompletion`` (``kw`` as litellm
would pass it to the handler) without litellm's per-call setup, logging and cost lookup
(milliseconds per call; a local-only run then never imports litellm). A failure is mapped to
the exception litellm would raise, so replies and error texts equal the litellm route's.
Never retried: the local model is deterministic.
"""

from __future__ import annotations

import time
from typing import Any

from ragcourt.llm import providers
from ragcourt.llm.call_errors import describe
from ragcourt.llm.replies import Reply, candidate_logprobs, logprobs_of
from ragcourt.llm.types import ChatRequest, ChatResult


async def call_local(req: ChatRequest, kw: dict[str, Any]) -> Reply:
    """One local-model request (module doc); a failure is an ``ok=False`` reply."""
    from ragcourt.llm.local_provider import acomplete

    t0 = time.perf_counter()
    try:
        _, g = await acomplete(req.model, kw["messages"], kw, kw["timeout"])
    except Exception as exc:
        providers.configure_litellm()
        from litellm.litellm_core_utils.exception_mapping_utils import exception_type

        try:  # what litellm.acompletion raises for a handler's exception
            mapped: BaseException = exception_type(  # type: ignore[no-untyped-call]
                model=req.model, original_exception=exc, custom_llm_provider="local"
            )
        except Exception as raised:  # it returns litellm's own types, raises the rest
            mapped = raised
        latency = time.perf_counter() - t0
        return Reply(
            ChatResult(
                ok=False,
                model=req.model,
                error=f"{describe(mapped)} (after 1 attempt)",
                attempts=1,
                latency_s=latency,
            )
        )
    return Reply(
        ChatResult(
            ok=True,
            text=g.text,
            model=req.model,
            latency_s=time.perf_counter() - t0,
            prompt_tokens=g.prompt_tokens,
            completion_tokens=g.completion_tokens,
            cost_usd=0.0,
            attempts=1,
            logprobs=logprobs_of({"logprobs": {"content": g.logprobs}}),
            finish_reason=g.finish_reason,
            prefix_hit_tokens=g.prefix_hit_tokens,
        ),
        candidate_logprobs(g.candidate_logprobs),
    )
