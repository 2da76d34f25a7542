"""Typed requests and results of the LLM gateway (the contract every stage codes against).

Model failures never raise out of the gateway: each request yields a result with
``ok=False`` and an ``error`` string, which the calling stage turns into an error row.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field

T = TypeVar("T", bound=BaseModel)


class ChatRequest(BaseModel):
    """One chat completion. ``top_logprobs > 0`` asks for OpenAI-format logprobs.

    ``tag`` labels the call for accounting (e.g. ``qagen.question``); it is not part of the
    cache key. Everything else is.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str
    messages: tuple[tuple[str, str], ...]  # ((role, content), ...): hashable and ordered
    temperature: float = 0.0
    max_tokens: int = 256
    seed: int | None = 0
    stop: tuple[str, ...] | None = None
    top_logprobs: int = 0
    json_mode: bool = False
    tag: str = ""

    @classmethod
    def of(cls, model: str, system: str | None, user: str, **kw: Any) -> ChatRequest:
        """Convenience: a system + user message pair (``kw``: the other fields, validated)."""
        msgs: list[tuple[str, str]] = []
        if system:
            msgs.append(("system", system))
        msgs.append(("user", user))
        return cls(model=model, messages=tuple(msgs), **kw)


class TokenLogprob(BaseModel):
    token: str
    logprob: float


class PositionLogprobs(BaseModel):
    """One generated position: the chosen token and the top alternatives (OpenAI format)."""

    token: str
    logprob: float
    top_logprobs: list[TokenLogprob] = Field(default_factory=list)


class ChatResult(BaseModel):
    ok: bool
    text: str = ""
    error: str | None = None
    model: str
    cached: bool = False
    latency_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    attempts: int = 1
    logprobs: list[PositionLogprobs] | None = None
    finish_reason: str | None = None
    prefix_hit_tokens: int = 0  # prompt tokens a local model reused from its last prompt


class StructuredResult(BaseModel, Generic[T]):
    """A parsed reply: ``value`` when ``ok``; otherwise ``raw`` keeps the last reply text."""

    ok: bool
    value: T | None = None
    raw: str = ""
    error: str | None = None
    attempts: int = 1
    model: str = ""
    cached: bool = False
    latency_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0


class TokenDistribution(BaseModel):
    """Next-token probabilities over candidate labels at the first answer position.

    ``raw[c]`` is the full-vocabulary probability of candidate ``c``'s first token;
    ``probs[c]`` renormalises ``raw`` over the candidates (sums to 1 when ``ok``).
    ``method`` says where they came from: ``logits`` (local model, exact) or
    ``top_logprobs`` (hosted model; candidates missing from the list get the documented
    fallback, see gateway docs). ``candidate_tokens`` shows the first token used per label.
    """

    ok: bool
    probs: dict[str, float] = Field(default_factory=dict)
    raw: dict[str, float] = Field(default_factory=dict)
    method: str = ""
    candidate_tokens: dict[str, str] = Field(default_factory=dict)
    fallback: list[str] = Field(default_factory=list)  # labels whose ``raw`` is an upper bound
    no_logprobs: bool = False  # the provider returned no logprobs at all (not a model failure)
    error: str | None = None
    model: str = ""
    cached: bool = False
