"""Gateway concurrency: 100 requests to a local OpenAI-compatible server that sleeps 200 ms
per request, with ``llm.concurrency`` 16 vs 1. Prints wall times and the speed-up.

    python -m benchmarks concurrency [--requests 100] [--delay 0.2] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from benchmarks._common import llm_testing
from ragcourt.llm import ChatRequest, Gateway
from ragcourt.llm.params import LLMParams

if TYPE_CHECKING:  # the tests' helper module (mypy_path: tests)
    from _llm_testing import openai_test_server
else:
    openai_test_server = llm_testing().openai_test_server


def run(n: int, concurrency: int, base_url: str, tag: str) -> tuple[float, int, int]:
    params = LLMParams(
        cache=False,
        concurrency=concurrency,
        concurrency_per_model={},
        cache_dir=tempfile.mkdtemp(prefix="bench_cache_"),
    )
    gw = Gateway(params, stage=f"bench_{tag}")
    reqs = [ChatRequest.of("openai/bench-model", None, f"{tag} request {i}") for i in range(n)]
    t0 = time.perf_counter()
    res = gw.chat(reqs)
    return time.perf_counter() - t0, sum(r.ok for r in res), len(res)


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--requests", type=int, default=100)
    ap.add_argument("--delay", type=float, default=0.2)
    ap.add_argument("--concurrency", type=int, default=16)
    args = ap.parse_args(argv)
    with openai_test_server(delay_s=args.delay) as srv:
        os.environ["OPENAI_API_BASE"] = srv.base_url
        os.environ.setdefault("OPENAI_API_KEY", "sk-local-test-server")
        run(4, 4, srv.base_url, "warmup")  # openai SDK lazy imports happen here
        srv.max_in_flight = 0
        t_par, ok_par, n = run(args.requests, args.concurrency, srv.base_url, "parallel")
        peak = srv.max_in_flight
        t_ser, ok_ser, _ = run(args.requests, 1, srv.base_url, "serial")
    ideal_ser = args.requests * args.delay
    print(f"requests: {n}, server delay: {args.delay * 1000:.0f} ms/request")
    print(f"concurrency 1:  {t_ser:6.2f} s  ({ok_ser} ok; ideal {ideal_ser:.1f} s)")
    print(
        f"concurrency {args.concurrency}: {t_par:6.2f} s  ({ok_par} ok; "
        f"peak in flight {peak}; ideal {-(-n // args.concurrency) * args.delay:.1f} s)"
    )
    print(f"speed-up: {t_ser / t_par:.1f}x (ideal {min(args.concurrency, n)}x)")
