"""The litellm route: one request through ``litellm.acompletion`` with retries and fail-fast.

Hosted models get a per-call timeout and retries with exponential backoff on rate limit /
timeout / 5xx / connection errors (:func:`ragcourt.llm.call_errors.retryable`). A hosted route
that cannot answer (a missing or refused key, an unknown model, no server:
:func:`ragcourt.llm.endpoints.fatal_reason`) is remembered in :class:`HostedRoutes`, so the
rest of the batch fails at once with the same one-line reason instead of calling and retrying.
In-process models (a registered custom provider's, and ``local/...`` when the gateway sends it
through litellm) have no timeout here and are never retried. Each hosted call runs in a
:func:`~ragcourt.core.bounded_http.guarded_call`: a redirect to another origin is fatal for the
route (:func:`~ragcourt.llm.endpoints.fatal_reason`), and a reply the guarded transport refused
(over the size bound, an encoding it cannot bound) is one line, not retried.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from ragcourt.core.bounded_http import ReplyBound, guarded_call
from ragcourt.llm import endpoints, providers
from ragcourt.llm.call_errors import describe, retryable
from ragcourt.llm.params import LLMParams
from ragcourt.llm.replies import Reply, from_response
from ragcourt.llm.types import ChatRequest, ChatResult

log = logging.getLogger("ragcourt.llm")


class HostedRoutes:
    """Where each hosted model is served (memoised) and which routes cannot answer."""

    def __init__(self, params: LLMParams) -> None:
        self.params = params
        self._routes: dict[str, endpoints.Route] = {}
        # hosted routes that cannot answer (refused key, unknown model, no server): the one-line
        # reason, so the rest of the batch fails at once instead of calling and retrying
        self.fatal: dict[str, str] = {}

    def route(self, model: str) -> endpoints.Route:
        """The hosted route of ``model`` (memoised)."""
        if model not in self._routes:
            self._routes[model] = endpoints.route(model, self.params)
        return self._routes[model]

    def preflight(self, model: str) -> str | None:
        """The one-line reason a hosted ``model`` cannot be called now (a missing key, or a
        fatal error seen earlier), else None. No call is made."""
        if providers.is_in_process(model) or providers.provider_of(model) == "":
            return None
        if model in self.fatal:
            return self.fatal[model]
        missing = endpoints.missing_key(self.route(model))
        if missing is not None:
            self.fatal[model] = missing
        return missing


def _failed(req: ChatRequest, error: str, attempts: int, latency_s: float) -> Reply:
    return Reply(
        ChatResult(ok=False, model=req.model, error=error, attempts=attempts, latency_s=latency_s)
    )


async def call_litellm(
    req: ChatRequest, kw: dict[str, Any], params: LLMParams, routes: HostedRoutes
) -> Reply:
    """``litellm.acompletion(**kw)`` for ``req`` with the retry and fail-fast rules (module
    doc); a failure is an ``ok=False`` reply naming the model, its host and the attempts."""
    providers.configure_litellm()
    import litellm

    local = providers.provider_of(req.model) == "local"
    if local:
        from ragcourt.llm.local_provider import ensure_registered

        ensure_registered()
    hosted = not providers.is_in_process(req.model)
    timeout = None if local else params.timeout_s
    t0 = time.perf_counter()
    attempts = 0
    fatal = routes.preflight(req.model)
    if fatal is not None:
        return Reply(ChatResult(ok=False, model=req.model, error=fatal, attempts=0))
    while True:
        attempts += 1
        with guarded_call(ReplyBound(params.reply_max_bytes, "llm.reply_max_bytes")) as guard:
            try:
                resp = await asyncio.wait_for(litellm.acompletion(**kw), timeout=timeout)
                break
            except Exception as err:
                exc = err
        s = "s" if attempts > 1 else ""
        where = f"{req.model} at {routes.route(req.model).host}: " if hosted else ""
        if hosted:
            reason = endpoints.fatal_reason(exc, routes.route(req.model), guard.refused)
            if reason is not None:
                routes.fatal.setdefault(req.model, reason)
                return _failed(req, reason, attempts, time.perf_counter() - t0)
        if guard.refused:  # a reply over the size bound, or in an encoding it cannot bound
            error = f"{where}{guard.refused[-1]} (after {attempts} attempt{s})"
            return _failed(req, error, attempts, time.perf_counter() - t0)
        if attempts <= params.max_retries and retryable(exc, req.model):
            delay = min(params.retry_backoff_s * 2 ** (attempts - 1), params.retry_backoff_max_s)
            log.warning(
                "%s attempt %d failed (%s); retrying in %.2fs",
                req.model,
                attempts,
                describe(exc),
                delay,
            )
            await asyncio.sleep(delay)
            continue
        error = f"{where}{describe(exc)} (after {attempts} attempt{s})"
        return _failed(req, error, attempts, time.perf_counter() - t0)
    return from_response(resp, req.model, time.perf_counter() - t0, attempts)
