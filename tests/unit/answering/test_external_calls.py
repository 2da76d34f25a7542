"""The per-question call loop: concurrency limit, timeouts, retries with backoff."""

from __future__ import annotations

import asyncio
import threading
import time

from ragcourt.answering.external.calls import (
    CallFailed,
    CallPolicy,
    call_all,
    in_thread,
    run_sync,
)


def test_backoff_is_exponential_capped_and_honours_retry_after() -> None:
    p = CallPolicy(concurrency=1, timeout_s=1, max_retries=5, backoff_s=0.5, backoff_max_s=3)
    assert [p.backoff(n) for n in (1, 2, 3, 4)] == [0.5, 1.0, 2.0, 3.0]
    assert p.backoff(1, retry_after_s=2.5) == 2.5 and p.backoff(1, retry_after_s=60) == 3.0


def test_retries_timeouts_and_non_retryable_failures() -> None:
    attempts: dict[str, int] = {}

    async def call(item: str) -> str:
        attempts[item] = attempts.get(item, 0) + 1
        if item == "flaky" and attempts[item] < 3:
            raise CallFailed("HTTP 503")
        if item == "stall":
            await asyncio.sleep(5)
        if item == "bad":
            raise CallFailed("HTTP 400", retryable=False)
        if item == "boom":
            raise ValueError("no luck")
        return item.upper()

    policy = CallPolicy(concurrency=4, timeout_s=0.2, max_retries=2, backoff_s=0.0)
    t0 = time.perf_counter()
    out = run_sync(lambda: call_all(["ok", "flaky", "stall", "bad", "boom"], call, policy))
    assert time.perf_counter() - t0 < 3  # the stalls were cut at 0.2 s each
    assert [o.result for o in out] == ["OK", "FLAKY", None, None, None]
    assert [o.error for o in out] == [
        None,
        None,
        "timed out after 0.2s (after 3 attempts)",
        "HTTP 400",
        "ValueError: no luck (after 3 attempts)",
    ]
    assert attempts == {"ok": 1, "flaky": 3, "stall": 3, "bad": 1, "boom": 3}
    assert out[2].seconds >= 0.6


def test_concurrency_limit_is_respected() -> None:
    live, peak = 0, 0

    async def call(item: int) -> int:
        nonlocal live, peak
        live += 1
        peak = max(peak, live)
        await asyncio.sleep(0.01)
        live -= 1
        return item

    policy = CallPolicy(concurrency=3, timeout_s=5, max_retries=0, backoff_s=0)
    out = run_sync(lambda: call_all(list(range(20)), call, policy))
    assert [o.result for o in out] == list(range(20)) and peak == 3


def test_blocking_calls_time_out_and_their_threads_are_abandoned() -> None:
    release = threading.Event()

    def blocking() -> str:
        release.wait(5)
        return "late"

    async def call(item: str) -> str:
        return await in_thread(blocking if item == "slow" else lambda: "fast")

    policy = CallPolicy(concurrency=2, timeout_s=0.2, max_retries=0, backoff_s=0)
    out = run_sync(lambda: call_all(["slow", "quick"], call, policy))
    release.set()
    assert [o.result for o in out] == [None, "fast"]
    assert out[0].error == "timed out after 0.2s"


def test_run_sync_inside_a_running_loop() -> None:
    async def outer() -> int:
        async def inner() -> int:
            return 7

        return run_sync(inner)

    assert asyncio.run(outer()) == 7
