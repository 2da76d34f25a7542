"""The LLM gateway: every model call of every stage goes through here.

Per request: disk-cache lookup (hit = zero model calls) -> per-model-prefix and global
semaphores -> ``litellm.acompletion`` with a per-call timeout -> retries with exponential
backoff on rate limit / timeout / 5xx / connection errors -> a ``ChatResult`` (``ok=False``
with ``error`` when the call still fails; nothing raises out of a batch for a model failure).
Accounting is per stage and per model (see ``accounting``).

In-process local models (``local/...``) skip litellm: the gateway calls the local provider's
code directly with the arguments litellm would hand it (litellm's per-call setup, logging and
cost lookup cost milliseconds per call, and a local-only run then never imports litellm);
replies and error texts are the same either way (``Gateway.local_direct``; issue 14).

Scheduling: a batch starts its requests in ``prefix_order`` (local-model requests sorted by
model and messages, so requests sharing a prompt prefix run back to back and the local
provider evaluates only what follows the shared prefix); results keep the request order.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, cast

from pydantic import BaseModel

from ragcourt.core.params import LLMParams
from ragcourt.core.redact import redact_urls_in
from ragcourt.llm import endpoints, label_probe, next_token, providers, structured
from ragcourt.llm.accounting import StageAccount, stage_account
from ragcourt.llm.cache import ReplyCache, cache_key
from ragcourt.llm.prompt_caching import provider_messages
from ragcourt.llm.types import (
    ChatRequest,
    ChatResult,
    PositionLogprobs,
    StructuredResult,
    TokenDistribution,
    TokenLogprob,
)

log = logging.getLogger("ragcourt.llm")
M = TypeVar("M", bound=BaseModel)
R = TypeVar("R")

_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD)", re.IGNORECASE)


def scrub(text: str) -> str:
    """Mask secret-looking environment values and ``sk-...`` keys in an error message."""
    for name, value in os.environ.items():
        if _SECRET_NAME.search(name) and len(value) >= 8 and value in text:
            text = text.replace(value, "***")
    return re.sub(r"\bsk-[A-Za-z0-9_\-]{8,}", "sk-***", text)


def _describe(exc: BaseException) -> str:
    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return scrub(redact_urls_in(f"{type(exc).__name__}: {msg}"[:600]))


def _retryable(exc: BaseException, model: str) -> bool:
    """Rate limits, timeouts, 5xx and connection errors are retried; 4xx are not.
    The in-process local model is deterministic, so its failures are never retried."""
    if providers.provider_of(model) == "local":
        return False
    providers.configure_litellm()
    from litellm import exceptions as err

    if isinstance(exc, err.BadRequestError | err.AuthenticationError):
        return False
    if isinstance(exc, err.NotFoundError | err.PermissionDeniedError):
        return False
    if isinstance(exc, err.Timeout | asyncio.TimeoutError | TimeoutError):
        return True
    if isinstance(
        exc,
        err.RateLimitError
        | err.APIConnectionError
        | err.InternalServerError
        | err.ServiceUnavailableError
        | err.BadGatewayError,
    ):
        return True
    return getattr(exc, "status_code", None) in {429, 500, 502, 503, 504}


def prefix_order(reqs: Sequence[ChatRequest]) -> list[int]:
    """The order to start ``reqs`` in: other models' requests first as given, then local-model
    requests sorted (stably) by (model, messages); sorting puts requests that share a leading
    run of messages - hence a rendered prompt prefix - next to each other."""
    local = [i for i, r in enumerate(reqs) if providers.provider_of(r.model) == "local"]
    others = [i for i, r in enumerate(reqs) if providers.provider_of(r.model) != "local"]
    return others + sorted(local, key=lambda i: (reqs[i].model, reqs[i].messages))


def _checked_candidates(candidates: Sequence[str]) -> list[str]:
    """``candidates`` as a list; empty, blank or repeated labels are a ValueError."""
    cands = list(candidates)
    if not cands or any(not c for c in cands) or len(set(cands)) != len(cands):
        raise ValueError(f"candidates must be distinct non-empty strings, got {cands!r}")
    return cands


def _run_sync(coro: Awaitable[R]) -> R:
    """Run a coroutine from sync code (in a helper thread when a loop is already running)."""

    async def wrap() -> R:
        return await coro

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(wrap())
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, wrap()).result()


class _Limits:
    """Semaphores of one batch: per model prefix (longest match) then global."""

    def __init__(self, params: LLMParams) -> None:
        self.global_sem = asyncio.Semaphore(params.concurrency)
        self.per_prefix = {p: asyncio.Semaphore(n) for p, n in params.concurrency_per_model.items()}

    def _prefix_sem(self, model: str) -> asyncio.Semaphore | None:
        matches = [p for p in self.per_prefix if model.startswith(p)]
        return self.per_prefix[max(matches, key=len)] if matches else None

    @asynccontextmanager
    async def hold(self, model: str) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            sem = self._prefix_sem(model)
            if sem is not None:  # model slot first, so waiting local calls keep no global slot
                await stack.enter_async_context(sem)
            await stack.enter_async_context(self.global_sem)
            yield


class _Progress:
    """A rich progress bar on a terminal; otherwise one log line at the end."""

    def __init__(self, desc: str, total: int) -> None:
        self.desc, self.total, self.done = desc or "llm", total, 0
        self._bar: Any = None
        self._task: Any = None
        if total > 1 and sys.stderr.isatty():
            from rich.progress import Progress

            self._bar = Progress(transient=True)
            self._bar.start()
            self._task = self._bar.add_task(self.desc, total=total)

    def advance(self) -> None:
        self.done += 1
        if self._bar is not None:
            self._bar.update(self._task, advance=1)

    def close(self, summary: str) -> None:
        if self._bar is not None:
            self._bar.stop()
        log.info("%s: %d requests, %s", self.desc, self.total, summary)


@dataclass
class _Reply:
    """A ChatResult plus the exact candidate logprobs a local provider may return."""

    result: ChatResult
    candidate_logprobs: dict[str, tuple[str, float]] | None = None


def _logprobs(choice: Any) -> list[PositionLogprobs] | None:
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


def _cost(resp: Any, model: str) -> float:
    if providers.is_in_process(model):
        return 0.0
    providers.configure_litellm()
    import litellm

    try:
        return float(litellm.completion_cost(completion_response=resp) or 0.0)
    except Exception:  # model not in the cost map: unknown cost is reported as 0
        return 0.0


class Gateway:
    """Batch chat / structured / next-token calls for one stage (see module doc).

    Cheap to build; the local model loads lazily once per process. Sync methods run their
    own event loop; ``achat``/``astructured``/``anext_token_probs`` are the async forms.
    """

    #: local models are called directly (``_call_local``); False sends them through
    #: ``litellm.acompletion`` like every other model (same replies: tests compare the routes)
    local_direct: bool = True

    def __init__(self, params: LLMParams, stage: str) -> None:
        if not re.fullmatch(r"[A-Za-z0-9_.\-]+", stage):
            raise ValueError(f"stage name '{stage}' must be [A-Za-z0-9_.-]+ (used in file names)")
        self.params = params
        self.stage = stage
        self.cache = ReplyCache(params.cache_dir, enabled=params.cache)
        self.account: StageAccount = stage_account(stage)
        self._routes: dict[str, endpoints.Route] = {}
        # hosted routes that cannot answer (refused key, unknown model, no server): the one-line
        # reason, so the rest of the batch fails at once instead of calling and retrying
        self._fatal: dict[str, str] = {}
        # models whose provider refused ``response_format``: JSON by prompt and validation
        self._no_response_format: set[str] = set()

    def route(self, model: str) -> endpoints.Route:
        """The hosted route of ``model`` (memoised for this gateway's life)."""
        if model not in self._routes:
            self._routes[model] = endpoints.route(model, self.params)
        return self._routes[model]

    def _hosted(self, model: str) -> bool:
        return not providers.is_in_process(model)

    # ---------------------------------------------------------------- sync API
    def chat(self, reqs: Sequence[ChatRequest], desc: str = "") -> list[ChatResult]:
        """One result per request, order kept; failures are ``ok=False`` results."""
        return _run_sync(self.achat(reqs, desc))

    def structured(
        self, reqs: Sequence[ChatRequest], model: type[M], desc: str = ""
    ) -> list[StructuredResult[M]]:
        """JSON replies parsed as ``model``; bounded parse retries, then ``ok=False`` + raw."""
        return _run_sync(self.astructured(reqs, model, desc))

    def next_token_probs(
        self, reqs: Sequence[ChatRequest], candidates: Sequence[str], desc: str = ""
    ) -> list[TokenDistribution]:
        """P(first answer token) over ``candidates`` (see ``next_token`` for the method)."""
        return _run_sync(self.anext_token_probs(reqs, candidates, desc))

    def next_token_probs_grouped(
        self, groups: Sequence[tuple[Sequence[ChatRequest], Sequence[str]]], desc: str = ""
    ) -> list[list[TokenDistribution]]:
        """:meth:`next_token_probs` for several ``(requests, candidates)`` groups as one batch:
        one ``prefix_order``, so requests of different judges that share a prompt prefix (the
        same question and passage) run back to back; one result list per group, order kept."""
        return _run_sync(self.anext_token_probs_grouped(groups, desc))

    def metrics_path(self) -> Path:
        return Path(self.params.metrics_dir) / f"llm_{self.stage}.json"

    def write_metrics(self, path: Path | str | None = None) -> Path:
        """Write this stage's accounting (atomic JSON) and return its path."""
        return self.account.write(path or self.metrics_path())

    # ---------------------------------------------------------------- async API
    async def achat(self, reqs: Sequence[ChatRequest], desc: str = "") -> list[ChatResult]:
        limits = _Limits(self.params)
        replies = await self._batch(
            reqs, lambda r: self._call(r, limits), desc, lambda x: x.result.ok
        )
        return [r.result for r in replies]

    async def astructured(
        self, reqs: Sequence[ChatRequest], model: type[M], desc: str = ""
    ) -> list[StructuredResult[M]]:
        limits = _Limits(self.params)
        return await self._batch(
            reqs, lambda r: self._structured_one(r, model, limits), desc, lambda x: x.ok
        )

    async def anext_token_probs(
        self, reqs: Sequence[ChatRequest], candidates: Sequence[str], desc: str = ""
    ) -> list[TokenDistribution]:
        cands = _checked_candidates(candidates)
        limits = _Limits(self.params)
        return await self._batch(
            reqs, lambda r: self._dist_one(r, cands, limits), desc, lambda x: x.ok
        )

    async def anext_token_probs_grouped(
        self, groups: Sequence[tuple[Sequence[ChatRequest], Sequence[str]]], desc: str = ""
    ) -> list[list[TokenDistribution]]:
        cands = [_checked_candidates(c) for _, c in groups]
        # a copy per request: its id names its group's candidates (a request object may be
        # passed in two groups); copies compare and cache like the originals
        flat = [(req.model_copy(), g) for g, (reqs, _) in enumerate(groups) for req in reqs]
        cands_of = {id(req): cands[g] for req, g in flat}
        limits = _Limits(self.params)
        results = await self._batch(
            [req for req, _ in flat],
            lambda r: self._dist_one(r, cands_of[id(r)], limits),
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
        ok: Any,
    ) -> list[R]:
        """``one(req)`` for every request, started in ``prefix_order``; results in order."""
        if not reqs:
            return []
        order = prefix_order(reqs)
        coros = [one(reqs[i]) for i in order]
        progress = _Progress(desc, len(coros))
        t0 = time.perf_counter()

        async def tracked(c: Awaitable[R]) -> R:
            out = await c
            progress.advance()
            return out

        try:
            started = list(await asyncio.gather(*(tracked(c) for c in coros)))
        finally:
            elapsed = time.perf_counter() - t0
            self.account.add_wall_time(elapsed)
        results: list[R] = [started[0]] * len(started)
        for pos, i in enumerate(order):
            results[i] = started[pos]
        failed = sum(1 for r in results if not ok(r))
        progress.close(f"{failed} failed, {elapsed:.1f}s")
        return results

    # ---------------------------------------------------------------- one request
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
        limits: _Limits,
        response_format: dict[str, Any] | None = None,
        candidates: list[str] | None = None,
    ) -> _Reply:
        if response_format is None and req.json_mode:
            response_format = _json_format(req, None)
        try:
            key = cache_key(req, self._key_extra(req, response_format, candidates))
        except Exception as exc:  # e.g. local model not in the registry
            self.account.record(req.model, cached=False, ok=False, attempts=0)
            return _Reply(ChatResult(ok=False, model=req.model, error=_describe(exc), attempts=0))
        t0 = time.perf_counter()
        hit = self.cache.get(key)
        if hit is None:
            async with self.cache.claim(key):  # the same request elsewhere in flight: wait for it
                hit = self.cache.get(key)
                if hit is None:
                    async with limits.hold(req.model):
                        return await self._call_uncached(req, key, response_format, candidates)
        res = _from_cache(hit, req.model, time.perf_counter() - t0)
        self.account.record(req.model, cached=True, ok=True)
        return _Reply(res, _cand(hit))

    async def _call_uncached(
        self,
        req: ChatRequest,
        key: str,
        response_format: dict[str, Any] | None,
        candidates: list[str] | None,
    ) -> _Reply:
        kw = self._litellm_kwargs(req, response_format, candidates)
        local = providers.provider_of(req.model) == "local"
        if local and self.local_direct:
            return await self._call_local(req, key, kw)
        providers.configure_litellm()
        import litellm

        if local:
            from ragcourt.llm.local_provider import ensure_registered

            ensure_registered()
        timeout = None if local else self.params.timeout_s
        t0 = time.perf_counter()
        attempts = 0
        fatal = self._preflight(req.model)
        if fatal is not None:
            self.account.record(req.model, cached=False, ok=False, attempts=0)
            return _Reply(ChatResult(ok=False, model=req.model, error=fatal, attempts=0))
        while True:
            attempts += 1
            try:
                resp = await asyncio.wait_for(litellm.acompletion(**kw), timeout=timeout)
                break
            except Exception as exc:
                reason = (
                    endpoints.fatal_reason(exc, self.route(req.model))
                    if self._hosted(req.model)
                    else None
                )
                if reason is not None:
                    self._fatal.setdefault(req.model, reason)
                    latency = time.perf_counter() - t0
                    self.account.record(
                        req.model, cached=False, ok=False, attempts=attempts, latency_s=latency
                    )
                    return _Reply(
                        ChatResult(
                            ok=False,
                            model=req.model,
                            error=reason,
                            attempts=attempts,
                            latency_s=latency,
                        )
                    )
                if attempts <= self.params.max_retries and _retryable(exc, req.model):
                    delay = min(
                        self.params.retry_backoff_s * 2 ** (attempts - 1),
                        self.params.retry_backoff_max_s,
                    )
                    log.warning(
                        "%s attempt %d failed (%s); retrying in %.2fs",
                        req.model,
                        attempts,
                        _describe(exc),
                        delay,
                    )
                    await asyncio.sleep(delay)
                    continue
                latency = time.perf_counter() - t0
                self.account.record(
                    req.model, cached=False, ok=False, attempts=attempts, latency_s=latency
                )
                where = (
                    f"{req.model} at {self.route(req.model).host}: "
                    if self._hosted(req.model)
                    else ""
                )
                err = (
                    f"{where}{_describe(exc)} "
                    f"(after {attempts} attempt{'s' if attempts > 1 else ''})"
                )
                return _Reply(
                    ChatResult(
                        ok=False, model=req.model, error=err, attempts=attempts, latency_s=latency
                    )
                )
        latency = time.perf_counter() - t0
        choice = resp.choices[0]
        usage = getattr(resp, "usage", None)
        hidden = getattr(resp, "_hidden_params", None) or {}
        cand_raw = hidden.get("candidate_logprobs")
        return self._success(
            req,
            key,
            ChatResult(
                ok=True,
                text=getattr(choice.message, "content", None) or "",
                model=req.model,
                latency_s=latency,
                prompt_tokens=int(getattr(usage, "prompt_tokens", 0) or 0),
                completion_tokens=int(getattr(usage, "completion_tokens", 0) or 0),
                cost_usd=_cost(resp, req.model),
                attempts=attempts,
                logprobs=_logprobs(choice),
                finish_reason=getattr(choice, "finish_reason", None),
                prefix_hit_tokens=int(hidden.get("prefix_hit_tokens") or 0),
            ),
            {c: (str(v[0]), float(v[1])) for c, v in cand_raw.items()} if cand_raw else None,
        )

    def _preflight(self, model: str) -> str | None:
        """The one-line reason a hosted ``model`` cannot be called now (a missing key, or a
        fatal error seen earlier in this gateway), else None. No call is made."""
        if not self._hosted(model) or providers.provider_of(model) == "":
            return None
        if model in self._fatal:
            return self._fatal[model]
        missing = endpoints.missing_key(self.route(model))
        if missing is not None:
            self._fatal[model] = missing
        return missing

    async def _call_local(self, req: ChatRequest, key: str, kw: dict[str, Any]) -> _Reply:
        """An in-process local model called directly: the same provider code and arguments
        as through ``litellm.acompletion`` (``kw`` as litellm would pass it to the handler)
        without litellm's per-call setup, logging and cost lookup; a failure is mapped to
        the exception litellm would raise, so error texts are unchanged. Never retried."""
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
            self.account.record(req.model, cached=False, ok=False, attempts=1, latency_s=latency)
            return _Reply(
                ChatResult(
                    ok=False,
                    model=req.model,
                    error=f"{_describe(mapped)} (after 1 attempt)",
                    attempts=1,
                    latency_s=latency,
                )
            )
        cand = g.candidate_logprobs
        return self._success(
            req,
            key,
            ChatResult(
                ok=True,
                text=g.text,
                model=req.model,
                latency_s=time.perf_counter() - t0,
                prompt_tokens=g.prompt_tokens,
                completion_tokens=g.completion_tokens,
                cost_usd=0.0,
                attempts=1,
                logprobs=_logprobs({"logprobs": {"content": g.logprobs}}),
                finish_reason=g.finish_reason,
                prefix_hit_tokens=g.prefix_hit_tokens,
            ),
            {c: (str(v[0]), float(v[1])) for c, v in cand.items()} if cand else None,
        )

    def _success(
        self,
        req: ChatRequest,
        key: str,
        result: ChatResult,
        cand: dict[str, tuple[str, float]] | None,
    ) -> _Reply:
        """Account and cache a successful call."""
        self.account.record(
            req.model,
            cached=False,
            ok=True,
            attempts=result.attempts,
            prompt_tokens=result.prompt_tokens,
            completion_tokens=result.completion_tokens,
            latency_s=result.latency_s,
            cost_usd=result.cost_usd,
            prefix_hit_tokens=result.prefix_hit_tokens,
        )
        self.cache.set(key, _to_cache(result, cand))
        return _Reply(result, cand)

    async def _structured_one(
        self, req: ChatRequest, model: type[M], limits: _Limits
    ) -> StructuredResult[M]:
        fmt = None if req.model in self._no_response_format else _json_format(req, model)
        result_type = _structured_type(model)
        messages = list(req.messages)
        last: ChatResult | None = None
        error = ""
        tokens = [0, 0]
        latency = 0.0
        for attempt in range(1, self.params.parse_retries + 2):
            this = req.model_copy(
                update={"messages": tuple(messages), "json_mode": fmt is not None}
            )
            last = (await self._call(this, limits, response_format=fmt)).result
            if not last.ok and fmt is not None and _format_refused(last.error):
                # a 400 to a request with response_format: ask again by prompt only; when that
                # works the provider does not take it, so this model is asked by prompt from now
                plain = (
                    await self._call(
                        this.model_copy(update={"json_mode": False}), limits, response_format=None
                    )
                ).result
                if plain.ok:
                    self._no_response_format.add(req.model)
                    log.info("%s refused response_format: JSON by prompt and validation", req.model)
                    fmt, last = None, plain
            tokens[0] += last.prompt_tokens
            tokens[1] += last.completion_tokens
            latency += last.latency_s
            if not last.ok:
                return result_type(
                    ok=False,
                    raw=last.text,
                    error=last.error,
                    model=req.model,
                    cached=last.cached,
                    latency_s=latency,
                    prompt_tokens=tokens[0],
                    completion_tokens=tokens[1],
                    attempts=attempt,
                )
            try:
                value = structured.parse_reply(last.text, model)
            except structured.ReplyParseError as err:
                error = str(err)
                messages += [
                    ("assistant", last.text),
                    ("user", structured.repair_message(error, model)),
                ]
                continue
            return result_type(
                ok=True,
                value=value,
                raw=last.text,
                model=req.model,
                cached=last.cached,
                latency_s=latency,
                prompt_tokens=tokens[0],
                completion_tokens=tokens[1],
                attempts=attempt,
            )
        self.account.record_parse_failure(req.model)
        assert last is not None
        n = self.params.parse_retries + 1
        how = "response_format and validation" if fmt is not None else "prompt and validation"
        return result_type(
            ok=False,
            raw=last.text,
            error=f"{req.model}: reply not parsable after {n} attempts (JSON by {how}): {error}",
            model=req.model,
            cached=last.cached,
            latency_s=latency,
            prompt_tokens=tokens[0],
            completion_tokens=tokens[1],
            attempts=n,
        )

    async def _dist_one(
        self, req: ChatRequest, candidates: list[str], limits: _Limits
    ) -> TokenDistribution:
        if providers.provider_of(req.model) == "local":
            this = req.model_copy(update={"max_tokens": 1, "top_logprobs": 0})
            reply = await self._call(this, limits, candidates=candidates)
            if not reply.result.ok:
                return _failed_dist(reply.result, "logits")
            return next_token.from_candidate_logprobs(
                candidates, reply.candidate_logprobs or {}, req.model, reply.result.cached
            )
        k = self.params.next_token_top_logprobs
        this = req.model_copy(update={"max_tokens": 1, "top_logprobs": k})
        reply = await self._call(this, limits)
        if not reply.result.ok:
            return _failed_dist(reply.result, "top_logprobs")
        lps, text, cached = reply.result.logprobs, reply.result.text, reply.result.cached
        if not lps:  # no logprobs at all: the greedy label, a hard distribution
            return label_probe.from_generated(candidates, text, req.model, cached, True)
        dist = next_token.from_top_logprobs(candidates, lps[0], req.model, cached)
        if not dist.ok or not dist.fallback:
            return dist
        # some label is not in the top k: one yes/no probe per label, else the greedy label,
        # else the floors (``fallback`` names them); see ragcourt.llm.label_probe
        probes = [label_probe.probe_request(this, c) for c in candidates]
        replies = [r.result for r in await asyncio.gather(*(self._call(p, limits) for p in probes))]
        all_cached = cached and all(r.cached for r in replies)
        probed = label_probe.from_probes(candidates, replies, req.model, all_cached)
        if probed.ok:
            return probed
        log.debug("%s: %s", req.model, probed.error)
        greedy = label_probe.from_generated(candidates, text, req.model, cached, False)
        return greedy if greedy.ok else dist


def _format_refused(error: str | None) -> bool:
    """A 400 (or litellm's unsupported-params error) to a request that carried
    ``response_format``: possibly the format refused, which a plain retry tells."""
    text = (error or "").lower()
    return "badrequest" in text or "unsupportedparams" in text


def _structured_type(model: type[M]) -> type[StructuredResult[M]]:
    """``StructuredResult[model]`` (pydantic then validates and dumps ``value`` as ``model``);
    spelled ``__class_getitem__`` because mypy rejects a variable inside ``[...]``."""
    return cast("type[StructuredResult[M]]", StructuredResult.__class_getitem__(model))


def _failed_dist(res: ChatResult, method: str) -> TokenDistribution:
    return TokenDistribution(
        ok=False, method=method, model=res.model, cached=res.cached, error=res.error
    )


def _json_format(req: ChatRequest, model: type[BaseModel] | None) -> dict[str, Any] | None:
    """The ``response_format`` to ask for JSON: a schema for local models (llama.cpp grammar)
    and hosted models that support response schemas, ``json_object`` where supported, else
    none (the prompt asks for JSON and the reply is parsed leniently)."""
    provider = providers.provider_of(req.model)
    schema_fmt = (
        {
            "type": "json_schema",
            "json_schema": {"name": model.__name__, "schema": model.model_json_schema()},
        }
        if model is not None
        else None
    )
    if provider == "local":
        return schema_fmt or {"type": "json_object"}
    if provider == "scripted":
        return schema_fmt or {"type": "json_object"}
    providers.configure_litellm()
    import litellm

    try:
        if schema_fmt is not None and litellm.supports_response_schema(req.model):
            return schema_fmt
        supported = litellm.get_supported_openai_params(model=req.model) or []
    except Exception:  # unknown model string: ask by prompt only
        return None
    mentions_json = any("json" in c.lower() for _, c in req.messages)
    if "response_format" in supported and mentions_json:
        return {"type": "json_object"}
    return None


def _to_cache(res: ChatResult, cand: dict[str, tuple[str, float]] | None) -> dict[str, Any]:
    return {
        "text": res.text,
        "prompt_tokens": res.prompt_tokens,
        "completion_tokens": res.completion_tokens,
        "cost_usd": res.cost_usd,
        "finish_reason": res.finish_reason,
        "logprobs": [p.model_dump() for p in res.logprobs] if res.logprobs else None,
        "candidate_logprobs": {c: list(v) for c, v in cand.items()} if cand else None,
    }


def _from_cache(hit: dict[str, Any], model: str, latency: float) -> ChatResult:
    lps = hit.get("logprobs")
    return ChatResult(
        ok=True,
        text=hit["text"],
        model=model,
        cached=True,
        latency_s=latency,
        prompt_tokens=hit.get("prompt_tokens", 0),
        completion_tokens=hit.get("completion_tokens", 0),
        cost_usd=0.0,
        attempts=0,
        finish_reason=hit.get("finish_reason"),
        logprobs=[PositionLogprobs.model_validate(p) for p in lps] if lps else None,
    )


def _cand(hit: dict[str, Any]) -> dict[str, tuple[str, float]] | None:
    raw = hit.get("candidate_logprobs")
    return {c: (str(v[0]), float(v[1])) for c, v in raw.items()} if raw else None
