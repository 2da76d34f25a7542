"""How the gateway runs a batch: start order, concurrency limits, progress, sync entry.

:func:`prefix_order` starts local-model requests sorted by (model, messages), so requests
sharing a prompt prefix run back to back and the local provider evaluates only what follows
the shared prefix; :func:`run_batch` keeps the request order in its results. :class:`Limits`
holds one batch's semaphores: per model prefix (longest match), then global.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any, TypeVar

from ragcourt.llm import providers
from ragcourt.llm.accounting import StageAccount
from ragcourt.llm.params import LLMParams
from ragcourt.llm.types import ChatRequest

log = logging.getLogger("ragcourt.llm")
R = TypeVar("R")


def prefix_order(reqs: Sequence[ChatRequest]) -> list[int]:
    """The order to start ``reqs`` in: other models' requests first as given, then local-model
    requests sorted (stably) by (model, messages); sorting puts requests that share a leading
    run of messages - hence a rendered prompt prefix - next to each other."""
    local = [i for i, r in enumerate(reqs) if providers.provider_of(r.model) == "local"]
    others = [i for i, r in enumerate(reqs) if providers.provider_of(r.model) != "local"]
    return others + sorted(local, key=lambda i: (reqs[i].model, reqs[i].messages))


def run_sync(coro: Awaitable[R]) -> R:
    """Run a coroutine from sync code (in a helper thread when a loop is already running)."""

    async def wrap() -> R:
        return await coro

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(wrap())
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, wrap()).result()


class Limits:
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


class Progress:
    """A rich progress bar with ETA on a terminal; otherwise (a log file, Prefect's logs) a
    progress line with the ETA at most every ``log_every_s`` seconds, and one line at the end.
    ETA = elapsed / done * (total - done)."""

    def __init__(self, desc: str, total: int, log_every_s: float = 30.0) -> None:
        self.desc, self.total, self.done = desc or "llm", total, 0
        self._bar: Any = None
        self._task: Any = None
        self._t0 = self._last_log = time.monotonic()
        self._log_every_s = log_every_s
        if total > 1 and sys.stderr.isatty():
            from rich.progress import Progress as RichProgress

            self._bar = RichProgress(transient=True)  # columns include the time remaining
            self._bar.start()
            self._task = self._bar.add_task(self.desc, total=total)

    def advance(self) -> None:
        self.done += 1
        if self._bar is not None:
            self._bar.update(self._task, advance=1)
            return
        now = time.monotonic()
        if self.done < self.total and now - self._last_log >= self._log_every_s:
            self._last_log = now
            elapsed = now - self._t0
            eta = elapsed / self.done * (self.total - self.done)
            log.info(
                "%s: %d/%d requests, %.0fs elapsed, ETA %.0fs",
                self.desc,
                self.done,
                self.total,
                elapsed,
                eta,
            )

    def close(self, summary: str) -> None:
        if self._bar is not None:
            self._bar.stop()
        log.info("%s: %d requests, %s", self.desc, self.total, summary)


async def run_batch(
    reqs: Sequence[ChatRequest],
    one: Callable[[ChatRequest], Awaitable[R]],
    desc: str,
    ok: Callable[[R], bool],
    account: StageAccount,
) -> list[R]:
    """``one(req)`` for every request, started in ``prefix_order``; results in request order.
    The batch's wall time goes to ``account``."""
    if not reqs:
        return []
    order = prefix_order(reqs)
    coros = [one(reqs[i]) for i in order]
    progress = Progress(desc, len(coros))
    t0 = time.perf_counter()

    async def tracked(c: Awaitable[R]) -> R:
        out = await c
        progress.advance()
        return out

    try:
        started = list(await asyncio.gather(*(tracked(c) for c in coros)))
    finally:
        elapsed = time.perf_counter() - t0
        account.add_wall_time(elapsed)
    results: list[R] = [started[0]] * len(started)
    for pos, i in enumerate(order):
        results[i] = started[pos]
    failed = sum(1 for r in results if not ok(r))
    progress.close(f"{failed} failed, {elapsed:.1f}s")
    return results
