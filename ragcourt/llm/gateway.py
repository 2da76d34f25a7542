"""The LLM gateway: every model call of every stage goes through here.

Per request: disk-cache lookup (hit = zero model calls) -> per-model-prefix and global
semaphores (:mod:`~ragcourt.llm.batching`) -> the call: in-process local models directly
(:mod:`~ragcourt.llm.local_call`), every other model through ``litellm.acompletion`` with a
per-call timeout, retries and fail-fast (:mod:`~ragcourt.llm.litellm_route`) -> a
``ChatResult`` (``ok=False`` with ``error`` when the call still fails; nothing raises out of a
batch for a model failure). Accounting is per stage and per model (see ``accounting``); a
successful reply is cached (:mod:`~ragcourt.llm.replies`). Structured replies and next-token
distributions are built on the same call (:mod:`~ragcourt.llm.structured_call`,
:mod:`~ragcourt.llm.next_token_call`).

Scheduling: a batch starts its requests in ``prefix_order`` (local-model requests sorted by
model and messages, so requests sharing a prompt prefix run back to back and the local
provider evaluates only what follows the shared prefix); results keep the request order.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from ragcourt.llm import endpoints, providers
from ragcourt.llm.accounting import StageAccount, stage_account
from ragcourt.llm.batching import Limits, prefix_order, run_batch, run_sync
from ragcourt.llm.cache import ReplyCache, cache_key
from ragcourt.llm.call_errors import describe, scrub
from ragcourt.llm.litellm_route import HostedRoutes, call_litellm
from ragcourt.llm.local_call import call_local
from ragcourt.llm.next_token_call import checked_candidates, distribution_one
from ragcourt.llm.params import LLMParams
from ragcourt.llm.prompt_caching import provider_messages
from ragcourt.llm.replies import Call, Reply, from_cache, to_cache
from ragcourt.llm.structured_call import json_format, structured_one
from ragcourt.llm.types import ChatRequest, ChatResult, StructuredResult, TokenDistribution

M = TypeVar("M", bound=BaseModel)
R = TypeVar("R")

__all__ = ["Gateway", "prefix_order", "scrub"]


class Gateway:
    """Batch chat / structured / next-token calls for one stage (see module doc).

    Cheap to build; the local model loads lazily once per process. Sync methods run their
    own event loop; ``achat``/``astructured``/``anext_token_probs`` are the async forms.
    """

    #: local models are called directly (:func:`~ragcourt.llm.local_call.call_local`); False
    #: sends them through ``litellm.acompletion`` like every other model (same replies: tests
    #: compare the routes)
    local_direct: bool = True

    def __init__(self, params: LLMParams, stage: str) -> None:
        if not re.fullmatch(r"[A-Za-z0-9_.\-]+", stage):
            raise ValueError(f"stage name '{stage}' must be [A-Za-z0-9_.-]+ (used in file names)")
        self.params = params
        self.stage = stage
        self.cache = ReplyCache(params.cache_dir, enabled=params.cache)
        self.account: StageAccount = stage_account(stage)
        self.hosted = HostedRoutes(params)
        # models whose provider refused ``response_format``: JSON by prompt and validation
        self._no_response_format: set[str] = set()

    def route(self, model: str) -> endpoints.Route:
        """The hosted route of ``model`` (memoised for this gateway's life)."""
        return self.hosted.route(model)

    def _hosted(self, model: str) -> bool:
        return not providers.is_in_process(model)

    # ---------------------------------------------------------------- sync API
    def chat(self, reqs: Sequence[ChatRequest], desc: str = "") -> list[ChatResult]:
        """One result per request, order kept; failures are ``ok=False`` results."""
        return run_sync(self.achat(reqs, desc))

    def structured(
        self, reqs: Sequence[ChatRequest], model: type[M], desc: str = ""
    ) -> list[StructuredResult[M]]:
        """JSON replies parsed as ``model``; bounded parse retries, then ``ok=False`` + raw."""
        return run_sync(self.astructured(reqs, model, desc))

    def next_token_probs(
        self, reqs: Sequence[ChatRequest], candidates: Sequence[str], desc: str = ""
    ) -> list[TokenDistribution]:
        """P(first answer token) over ``candidates`` (see ``next_token`` for the method)."""
        return run_sync(self.anext_token_probs(reqs, candidates, desc))

    def next_token_probs_grouped(
        self, groups: Sequence[tuple[Sequence[ChatRequest], Sequence[str]]], desc: str = ""
    ) -> list[list[TokenDistribution]]:
        """:meth:`next_token_probs` for several ``(requests, candidates)`` groups as one batch:
        one ``prefix_order``, so requests of different judges that share a prompt prefix (the
        same question and passage) run back to back; one result list per group, order kept."""
        return run_sync(self.anext_token_probs_grouped(groups, desc))

    def metrics_path(self) -> Path:
        return Path(self.params.metrics_dir) / f"llm_{self.stage}.json"

    def write_metrics(self, path: Path | str | None = None) -> Path:
        """Write this stage's accounting (atomic JSON) and return its path."""
        return self.account.write(path or self.metrics_path())

    # ---------------------------------------------------------------- async API
    async def achat(self, reqs: Sequence[ChatRequest], desc: str = "") -> list[ChatResult]:
        call = self._caller(Limits(self.params))
        replies = await self._batch(reqs, call, desc, lambda x: x.result.ok)
        return [r.result for r in replies]

    async def astructured(
        self, reqs: Sequence[ChatRequest], model: type[M], desc: str = ""
    ) -> list[StructuredResult[M]]:
        call = self._caller(Limits(self.params))
        retries, refused = self.params.parse_retries, self._no_response_format

        def one(r: ChatRequest) -> Awaitable[StructuredResult[M]]:
            return structured_one(call, r, model, retries, refused, self.account)

        return await self._batch(reqs, one, desc, lambda x: x.ok)

    async def anext_token_probs(
        self, reqs: Sequence[ChatRequest], candidates: Sequence[str], desc: str = ""
    ) -> list[TokenDistribution]:
        cands = checked_candidates(candidates)
        call = self._caller(Limits(self.params))
        k = self.params.next_token_top_logprobs
        return await self._batch(
            reqs, lambda r: distribution_one(call, r, cands, k), desc, lambda x: x.ok
        )

    async def anext_token_probs_grouped(
        self, groups: Sequence[tuple[Sequence[ChatRequest], Sequence[str]]], desc: str = ""
    ) -> list[list[TokenDistribution]]:
        cands = [checked_candidates(c) for _, c in groups]
        # a copy per request: its id names its group's candidates (a request object may be
        # passed in two groups); copies compare and cache like the originals
        flat = [(req.model_copy(), g) for g, (reqs, _) in enumerate(groups) for req in reqs]
        cands_of = {id(req): cands[g] for req, g in flat}
        call = self._caller(Limits(self.params))
        k = self.params.next_token_top_logprobs
        results = await self._batch(
            [req for req, _ in flat],
            lambda r: distribution_one(call, r, cands_of[id(r)], k),
            desc,
            lambda x: x.ok,
        )
        out: list[list[TokenDistribution]] = [[] for _ in groups]
        for (_, g), r in zip(flat, results, strict=True):
            out[g].append(r)
        return out

    async def _batch(
        self,
        reqs: Sequence[ChatRequest],
        one: Callable[[ChatRequest], Awaitable[R]],
        desc: str,
        ok: Callable[[R], bool],
    ) -> list[R]:
        """``one(req)`` for every request, started in ``prefix_order``; results in order."""
        return await run_batch(reqs, one, desc, ok, self.account)

    # ---------------------------------------------------------------- one request
    def _caller(self, limits: Limits) -> Call:
        """:meth:`_call` bound to one batch's ``limits``."""

        def call(
            req: ChatRequest,
            response_format: dict[str, Any] | None = None,
            candidates: list[str] | None = None,
        ) -> Awaitable[Reply]:
            return self._call(req, limits, response_format, candidates)

        return call

    def _litellm_kwargs(
        self,
        req: ChatRequest,
        response_format: dict[str, Any] | None,
        candidates: list[str] | None,
    ) -> dict[str, Any]:
        kw: dict[str, Any] = {
            "model": req.model,
            "messages": provider_messages(req.model, req.messages),  # anthropic: cache_control
            "temperature": req.temperature,
            "max_tokens": req.max_tokens,
            "timeout": self.params.timeout_s,
            "num_retries": 0,
        }
        if req.seed is not None:
            kw["seed"] = req.seed
        if req.stop:
            kw["stop"] = list(req.stop)
        if req.top_logprobs > 0:
            kw["logprobs"] = True
            kw["top_logprobs"] = req.top_logprobs
        if response_format is not None:
            kw["response_format"] = response_format
        if providers.provider_of(req.model) == "local":
            kw["ragcourt_models_file"] = self.params.models_file
            kw["ragcourt_prefix_reuse"] = self.params.prefix_reuse
            if candidates is not None:
                kw["candidate_labels"] = candidates
        elif self._hosted(req.model):
            kw["drop_params"] = True  # e.g. seed on providers without it
            r = self.route(req.model)
            kw["top_p"] = self.params.top_p
            if r.api_base:
                kw["api_base"] = r.api_base
            if r.key_env and os.environ.get(r.key_env):
                kw["api_key"] = os.environ[r.key_env]
            if r.extra_body:
                kw["extra_body"] = dict(r.extra_body)
        return kw

    def _key_extra(
        self, req: ChatRequest, response_format: dict[str, Any] | None, candidates: list[str] | None
    ) -> dict[str, Any]:
        extra: dict[str, Any] = {}
        if response_format is not None:
            extra["response_format"] = response_format
        if candidates is not None:
            extra["candidates"] = candidates
        if providers.provider_of(req.model) == "local":
            from ragcourt.llm.local_provider import model_identity

            extra["local_model"] = model_identity(req.model, self.params.models_file)
        elif self._hosted(req.model):  # where it is served and how it samples (no secret)
            record = self.route(req.model).record()
            extra["api_base"] = record["api_base"]
            extra["sampling"] = {"top_p": self.params.top_p, **record["extra_body"]}
        return extra

    async def _call(
        self,
        req: ChatRequest,
        limits: Limits,
        response_format: dict[str, Any] | None = None,
        candidates: list[str] | None = None,
    ) -> Reply:
        if response_format is None and req.json_mode:
            response_format = json_format(req, None)
        try:
            key = cache_key(req, self._key_extra(req, response_format, candidates))
        except Exception as exc:  # e.g. local model not in the registry
            self.account.record(req.model, cached=False, ok=False, attempts=0)
            return Reply(ChatResult(ok=False, model=req.model, error=describe(exc), attempts=0))
        t0 = time.perf_counter()
        hit = self.cache.get(key)
        if hit is None:
            async with self.cache.claim(key):  # the same request elsewhere in flight: wait for it
                hit = self.cache.get(key)
                if hit is None:
                    async with limits.hold(req.model):
                        return await self._call_uncached(req, key, response_format, candidates)
        reply = from_cache(hit, req.model, time.perf_counter() - t0)
        self.account.record(req.model, cached=True, ok=True)
        return reply

    async def _call_uncached(
        self,
        req: ChatRequest,
        key: str,
        response_format: dict[str, Any] | None,
        candidates: list[str] | None,
    ) -> Reply:
        """The model call of a cache miss; its outcome is accounted, a success cached."""
        kw = self._litellm_kwargs(req, response_format, candidates)
        if providers.provider_of(req.model) == "local" and self.local_direct:
            reply = await call_local(req, kw)
        else:
            reply = await call_litellm(req, kw, self.params, self.hosted)
        res = reply.result
        self.account.record(
            req.model,
            cached=False,
            ok=res.ok,
            attempts=res.attempts,
            prompt_tokens=res.prompt_tokens,
            completion_tokens=res.completion_tokens,
            latency_s=res.latency_s,
            cost_usd=res.cost_usd,
            prefix_hit_tokens=res.prefix_hit_tokens,
        )
        if res.ok:
            self.cache.set(key, to_cache(reply))
        return reply
