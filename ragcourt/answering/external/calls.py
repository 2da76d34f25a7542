"""Calling an external system once per question: concurrency limit, timeout, retries.

:func:`call_all` runs ``call(item)`` for every item with at most ``concurrency`` in flight.
Each attempt is bounded by ``timeout_s`` (``asyncio.wait_for``; a synchronous callable runs in
its own daemon thread, which cannot be killed: after a timeout it is abandoned and its result
ignored). A failed attempt is retried up to ``max_retries`` times when retryable, waiting
``backoff_s * 2**(n-1)`` seconds before retry ``n`` (at most ``backoff_max_s``; a server's
``Retry-After`` lengthens the wait up to that cap). The outcome of an item is its result or
the last error message (with the attempt count when retried), and the wall time of all its
attempts.

A call signals a failure by raising: :class:`CallFailed` carries a ready message and whether a
retry may help; a timeout is retryable; any other exception is ``"<Type>: <message>"`` and
retryable. Exceptions are never re-raised, so one question's failure never stops the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from ragcourt.llm import batching

T = TypeVar("T")
R = TypeVar("R")


class CallFailed(Exception):
    """A failed attempt with a one-line ``message``; ``retryable`` says whether to try again."""

    def __init__(self, message: str, *, retryable: bool = True, retry_after_s: float = 0.0):
        super().__init__(message)
        self.message = message
        self.retryable = retryable
        self.retry_after_s = retry_after_s


@dataclass(frozen=True)
class CallPolicy:
    concurrency: int
    timeout_s: float
    max_retries: int
    backoff_s: float
    backoff_max_s: float = 30.0

    def backoff(self, retry: int, retry_after_s: float = 0.0) -> float:
        """Seconds to wait before retry number ``retry`` (1-based)."""
        wait = self.backoff_s * 2.0 ** (retry - 1)
        return float(min(self.backoff_max_s, max(wait, retry_after_s)))


@dataclass(frozen=True)
class Outcome(Generic[R]):
    """An item's result, or ``error`` when every attempt failed; ``seconds`` = wall time."""

    result: R | None
    error: str | None
    seconds: float
    attempts: int


def describe_exception(err: BaseException) -> str:
    """``<Type>: <message>`` (the type alone when the message is empty)."""
    text = str(err).strip().replace("\n", " ")
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


async def _attempt(call: Callable[[T], Awaitable[R]], item: T, timeout_s: float) -> R:
    return await asyncio.wait_for(call(item), timeout_s)


async def _one(
    call: Callable[[T], Awaitable[R]], item: T, policy: CallPolicy, sem: asyncio.Semaphore
) -> Outcome[R]:
    async with sem:
        t0 = time.perf_counter()
        attempts = 0
        while True:
            attempts += 1
            retry_after = 0.0
            try:
                result = await _attempt(call, item, policy.timeout_s)
                return Outcome(result, None, time.perf_counter() - t0, attempts)
            except TimeoutError:
                message, retryable = f"timed out after {policy.timeout_s:g}s", True
            except CallFailed as err:
                message, retryable, retry_after = err.message, err.retryable, err.retry_after_s
            except Exception as err:
                message, retryable = describe_exception(err), True
            if not retryable or attempts > policy.max_retries:
                if attempts > 1:
                    message = f"{message} (after {attempts} attempts)"
                return Outcome(None, message, time.perf_counter() - t0, attempts)
            await asyncio.sleep(policy.backoff(attempts, retry_after))


async def call_all(
    items: Sequence[T], call: Callable[[T], Awaitable[R]], policy: CallPolicy
) -> list[Outcome[R]]:
    """One :class:`Outcome` per item, in order."""
    sem = asyncio.Semaphore(policy.concurrency)
    return list(await asyncio.gather(*(_one(call, x, policy, sem) for x in items)))


def in_thread(fn: Callable[[], R]) -> Awaitable[R]:
    """Run blocking ``fn`` in a new daemon thread; the awaitable ends with its result. When
    the awaiting side gave up (timeout), the thread's late result is dropped."""
    loop = asyncio.get_running_loop()
    fut: asyncio.Future[R] = loop.create_future()

    def settle(value: R | None, err: BaseException | None) -> None:
        if fut.done():
            return
        if err is not None:
            fut.set_exception(err)
        else:
            fut.set_result(value)  # type: ignore[arg-type]

    def target() -> None:
        try:
            value: R | None = fn()
            err: BaseException | None = None
        except BaseException as e:  # delivered to the awaiting side as the call's error
            value, err = None, e
        # a closed loop (RuntimeError) means nobody waits for this result any more
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(settle, value, err)

    threading.Thread(target=target, name="ragcourt-external-call", daemon=True).start()
    return fut


def run_sync(make: Callable[[], Awaitable[R]]) -> R:
    """Run the coroutine ``make()`` from sync code (in a helper thread when this thread
    already runs an event loop, e.g. under a Prefect task): the gateway's own runner."""
    return batching.run_sync(make())
