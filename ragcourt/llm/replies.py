"""A model reply as the gateway handles it: read from a provider response, written to and
read from the reply cache.

:class:`Reply` is a :class:`~ragcourt.llm.types.ChatResult` plus the exact candidate
logprobs a local provider may return. A cached entry holds the text, token counts, cost,
finish reason, logprobs and candidate logprobs (:func:`to_cache`); read back
(:func:`from_cache`) it is a result with ``cached=True``, 0 attempts and cost 0.
:class:`Call` is how the structured and next-token layers ask the gateway for one reply.
"""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any, Protocol

from ragcourt.llm import providers
from ragcourt.llm.types import ChatRequest, ChatResult, PositionLogprobs, TokenLogprob

CandidateLogprobs = dict[str, tuple[str, float]]


@dataclass
class Reply:
    """A ChatResult plus the exact candidate logprobs a local provider may return."""

    result: ChatResult
    candidate_logprobs: CandidateLogprobs | None = None


class Call(Protocol):
    """One request through the gateway's cache, limits and route (one batch's limits)."""

    def __call__(
        self,
        req: ChatRequest,
        response_format: dict[str, Any] | None = None,
        candidates: list[str] | None = None,
    ) -> Awaitable[Reply]: ...


def candidate_logprobs(raw: dict[str, Any] | None) -> CandidateLogprobs | None:
    """``{label: (token, logprob)}`` from a provider's or the cache's form (None when empty)."""
    return {c: (str(v[0]), float(v[1])) for c, v in raw.items()} if raw else None


def logprobs_of(choice: Any) -> list[PositionLogprobs] | None:
    """The OpenAI-format ``logprobs.content`` of a response choice (object or dict)."""
    raw = getattr(choice, "logprobs", None)
    if raw is None and isinstance(choice, dict):
        raw = choice.get("logprobs")
    if raw is None:
        return None
    content = raw.get("content") if isinstance(raw, dict) else getattr(raw, "content", None)
    if not content:
        return None

    def field_of(obj: Any, name: str) -> Any:
        return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)

    out = []
    for pos in content:
        tops = [
            TokenLogprob(token=str(field_of(t, "token")), logprob=float(field_of(t, "logprob")))
            for t in field_of(pos, "top_logprobs") or []
        ]
        out.append(
            PositionLogprobs(
                token=str(field_of(pos, "token")),
                logprob=float(field_of(pos, "logprob")),
                top_logprobs=tops,
            )
        )
    return out


def cost_of(resp: Any, model: str) -> float:
    """litellm's cost of a response; 0 for in-process models and models not in its cost map."""
    if providers.is_in_process(model):
        return 0.0
    providers.configure_litellm()
    import litellm

    try:
        return float(litellm.completion_cost(completion_response=resp) or 0.0)
    except Exception:  # model not in the cost map: unknown cost is reported as 0
        return 0.0


def from_response(resp: Any, model: str, latency_s: float, attempts: int) -> Reply:
    """A successful litellm response as a reply (usage, cost, logprobs, prefix-cache hits)."""
    choice = resp.choices[0]
    usage = getattr(resp, "usage", None)
    hidden = getattr(resp, "_hidden_params", None) or {}
    return Reply(
        ChatResult(
            ok=True,
            text=getattr(choice.message, "content", None) or "",
            model=model,
            latency_s=latency_s,
            prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
            completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
            cost_usd=cost_of(resp, model),
            attempts=attempts,
            logprobs=logprobs_of(choice),
            finish_reason=getattr(choice, "finish_reason", None),
            prefix_hit_tokens=int(hidden.get("prefix_hit_tokens") or 0),
        ),
        candidate_logprobs(hidden.get("candidate_logprobs")),
    )


def to_cache(reply: Reply) -> dict[str, Any]:
    """The cache entry of a successful reply."""
    res, cand = reply.result, reply.candidate_logprobs
    return {
        "text": res.text,
        "prompt_tokens": res.prompt_tokens,
        "completion_tokens": res.completion_tokens,
        "cost_usd": res.cost_usd,
        "finish_reason": res.finish_reason,
        "logprobs": [p.model_dump() for p in res.logprobs] if res.logprobs else None,
        "candidate_logprobs": {c: list(v) for c, v in cand.items()} if cand else None,
    }


def from_cache(hit: dict[str, Any], model: str, latency_s: float) -> Reply:
    """A cache entry as a reply: ``cached``, 0 attempts, cost 0."""
    lps = hit.get("logprobs")
    result = ChatResult(
        ok=True,
        text=hit["text"],
        model=model,
        cached=True,
        latency_s=latency_s,
        prompt_tokens=hit.get("prompt_tokens", 0),
        completion_tokens=hit.get("completion_tokens", 0),
        cost_usd=0.0,
        attempts=0,
        finish_reason=hit.get("finish_reason"),
        logprobs=[PositionLogprobs.model_validate(p) for p in lps] if lps else None,
    )
    return Reply(result, candidate_logprobs(hit.get("candidate_logprobs")))
