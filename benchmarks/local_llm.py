"""Local model throughput: the gateway vs llama-cpp-python called directly on the same chat
prompt, plus the latency of a cache hit.

prompt tok/s = prompt tokens / time of a max_tokens=1 call; generation tok/s =
(generated - 1) / (time of the long call - time of the max_tokens=1 call). Both sides
evaluate the prompt from scratch each call (direct: ``Llama.reset()``; gateway:
``llm.prefix_reuse`` off, reply cache off), greedy decoding, the same GGUF, n_ctx, n_batch,
thread counts and chat template (the run checks both sides got the same prompt token count
and the same reply); model load and first-call setup are excluded (a warm-up call each).
Three sides: ``direct``, ``gateway`` (local models called directly, the default) and
``gw+litellm`` (``Gateway.local_direct = False``: through ``litellm.acompletion``, the older
route). Each repeat runs them in a rotated order; medians of ``--repeats``.
``overhead`` is the median per-call wall time of a side's max_tokens=1 call minus direct's
(noisy: the difference of two multi-second timings); ``outside model`` is the gateway's
wall time outside ``LocalModel.generate`` per call (routing, event loop, accounting).
Prefix reuse is measured apart: the same prompt again with reuse on (gateway: the provider
keeps the KV of all but the last 2 prompt tokens; direct: llama-cpp-python's own prefix
match without ``reset()``).

    python -m benchmarks local_llm [--repeats 3] [--max-tokens 64]

Measured (SmolLM2-135M, 308 prompt tokens, 64 generated). Wall-clock ratios on the shared
2-core machine (load average 7-9 from other jobs) are noise: one run each gave prompt 0.98 /
generation 0.90 (gateway) and 1.00 / 0.73 (gw+litellm), the old script on the old commit
right after gave 2.94 / 0.24. Instruction counts do not depend on load, so the overhead was
measured with ``valgrind --tool=callgrind --instr-atstart=no`` (instrumentation switched on
around the calls with ``callgrind_control -i on/off``):

- the real model, ``RAGCOURT_LLM_THREADS=1``, a 30-token prompt, max_tokens=1, before the
  change: ``ggml_graph_compute`` 3,384.4 M instructions on every side (same model work);
  outside it direct llama-cpp-python 5.4 M, the provider called alone 5.3 M, the gateway
  18.9 M: 13.5 M per call added by the gateway (litellm's wrapper, logging, cost-map lookup
  for an unpriced model, a new thread per call, the event loop).
- the gateway with a scripted ``LocalModel`` (no model work), 10 calls: 13.1 M instructions
  per call before, 1.7 M after (12.5 M with ``local_direct = False``); per-call wall / CPU
  time (median of 200, same machine): 8.5 / 7.3 ms before, 1.2 / 1.1 ms after.

That is about 7 ms saved per call: under 1% of a 308-token call (1.3-2.5 s on two idle
cores), so the gateway's own work cannot explain ratios of 0.76-0.89 reported from earlier
idle runs. The model work is the same on both sides; callgrind runs one thread, so it does
not see scheduling effects of 2 prompt threads (a new thread, hence a new OpenMP team in
llama.cpp, per gateway call: gone now, calls reuse an executor thread). The earlier gap was
most likely timing noise (3 repeats, one fixed order); not confirmed here by wall-clock
runs, since no idle machine was available.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import Any
from unittest.mock import patch

from ragcourt.core import offline

offline.apply()  # before litellm is imported: no cost-map download attempts

from ragcourt.llm import ChatRequest, Gateway  # noqa: E402
from ragcourt.llm import local_provider as lp  # noqa: E402
from ragcourt.llm.params import LLMParams  # noqa: E402

MODEL = "local/smollm2-135m"
SYSTEM = "You are a careful assistant. Answer using only the context."
CONTEXT = (
    "Retrieval-augmented generation (RAG) combines a retriever, which finds passages in a "
    "document collection, with a generator, which writes an answer conditioned on them. "
    "Evaluating a RAG system means checking whether the retrieved passages are relevant, "
    "whether the answer is faithful to them, and whether it answers the question. "
)
USER = "Context:\n" + CONTEXT * 4 + "\nQuestion: Explain in detail how a RAG system is evaluated."

Call = tuple[float, int, int, str]  # seconds, prompt tokens, completion tokens, text


def direct_call(llm: Any, max_tokens: int, reset: bool = True) -> Call:
    if reset:
        llm.reset()
    t0 = time.perf_counter()
    r = llm.create_chat_completion(
        [{"role": "system", "content": SYSTEM}, {"role": "user", "content": USER}],
        max_tokens=max_tokens,
        temperature=0.0,
    )
    dt = time.perf_counter() - t0
    u = r["usage"]
    return dt, u["prompt_tokens"], u["completion_tokens"], r["choices"][0]["message"]["content"]


def gateway_call(gw: Gateway, max_tokens: int) -> Call:
    req = ChatRequest.of(MODEL, SYSTEM, USER, max_tokens=max_tokens, temperature=0.0)
    t0 = time.perf_counter()
    [r] = gw.chat([req])
    dt = time.perf_counter() - t0
    assert r.ok, r.error
    return dt, r.prompt_tokens, r.completion_tokens, r.text


def rates(one: Call, long: Call) -> tuple[float, float]:
    prompt_tps = one[1] / one[0]
    gen_tps = (long[2] - 1) / max(long[0] - one[0], 1e-9)
    return prompt_tps, gen_tps


class ModelTimer:
    """Wall time spent inside ``LocalModel.generate`` (to split off the gateway's overhead)."""

    def __init__(self) -> None:
        self.total = 0.0
        self._orig = lp.LocalModel.generate

        def timed(model: lp.LocalModel, *a: Any, **k: Any) -> lp.Generation:
            t0 = time.perf_counter()
            try:
                return self._orig(model, *a, **k)
            finally:
                self.total += time.perf_counter() - t0

        patch.object(lp.LocalModel, "generate", timed).start()  # for the rest of the run


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--max-tokens", type=int, default=64)
    args = ap.parse_args(argv)
    from llama_cpp import Llama

    threads, batch_threads = lp.default_threads(), lp.default_batch_threads()

    def gateway(direct_route: bool) -> Gateway:
        # prefix reuse off: the gateway, like the direct side, evaluates from scratch
        params = LLMParams(
            cache=False, cache_dir=tempfile.mkdtemp(prefix="bench_llm_"), prefix_reuse=False
        )
        gw = Gateway(params, "bench_local")
        gw.local_direct = direct_route
        return gw

    gw, gw_litellm = gateway(True), gateway(False)
    timer = ModelTimer()
    gateway_call(gw, 1)  # warm-up: model load, sha256 memo
    gateway_call(gw_litellm, 1)  # warm-up: litellm import
    lm = lp.get_model(MODEL, None)
    direct = Llama(
        model_path=lm.llm.model_path,
        n_ctx=lm.llm.n_ctx(),
        n_batch=lm.llm.n_batch,
        n_threads=threads,
        n_threads_batch=batch_threads,
        verbose=False,
    )
    direct_call(direct, 1)

    sides: dict[str, Callable[[int], Call]] = {
        "direct": lambda n: direct_call(direct, n),
        "gateway": lambda n: gateway_call(gw, n),
        "gw+litellm": lambda n: gateway_call(gw_litellm, n),
    }
    names = list(sides)
    res: dict[str, list[tuple[float, float]]] = {k: [] for k in names}
    one_s: dict[str, list[float]] = {k: [] for k in names}
    outside: list[float] = []
    last: dict[str, tuple[Call, Call]] = {}
    for i in range(args.repeats):
        for k in names[i % 3 :] + names[: i % 3]:
            before = timer.total
            one = sides[k](1)
            inside = timer.total - before
            long = sides[k](args.max_tokens)
            res[k].append(rates(one, long))
            one_s[k].append(one[0])
            last[k] = (one, long)
            if k == "gateway":
                outside.append(one[0] - inside)

    med = {k: tuple(statistics.median(x[i] for x in v) for i in (0, 1)) for k, v in res.items()}
    print(f"threads: {threads} generation, {batch_threads} prompt; repeats: {args.repeats}")
    for k in names:
        p, g = med[k]
        (one, long) = last[k]
        extra = ""
        if k != "direct":
            diff = [a - b for a, b in zip(one_s[k], one_s["direct"], strict=True)]
            extra = (
                f"  ratio to direct: prompt {p / med['direct'][0]:.2f}, "
                f"generation {g / med['direct'][1]:.2f}; "
                f"overhead {statistics.median(diff) * 1000:+.0f} ms/call (target ratio >= 0.9)"
            )
        print(
            f"{k:10s} prompt {p:7.1f} tok/s ({one[1]} tokens)  generation {g:6.1f} tok/s "
            f"({long[2]} tokens){extra}"
        )
    texts = {last[k][1][3] for k in names}
    counts = {(last[k][0][1], last[k][1][2]) for k in names}
    print(f"same prompt token count and reply on all sides: {len(texts) == len(counts) == 1}")
    print(f"gateway outside model: {statistics.median(outside) * 1000:.1f} ms per call (median)")

    reuse_gw = Gateway(
        LLMParams(cache=False, cache_dir=tempfile.mkdtemp(prefix="bench_llm_")), "bench_reuse"
    )
    gateway_call(reuse_gw, 1)
    direct_call(direct, 1)
    g_re = statistics.median(gateway_call(reuse_gw, 1)[0] for _ in range(3))
    d_re = statistics.median(direct_call(direct, 1, reset=False)[0] for _ in range(3))
    print(
        f"prefix reuse (same prompt again, max_tokens=1): gateway {g_re * 1000:.0f} ms "
        f"(evaluates the last 2 tokens), direct without reset {d_re * 1000:.0f} ms "
        "(llama-cpp-python's own prefix match)"
    )

    cached = Gateway(
        LLMParams(cache=True, cache_dir=tempfile.mkdtemp(prefix="bench_llm_")), "bench_cache"
    )
    req = ChatRequest.of(MODEL, SYSTEM, USER, max_tokens=args.max_tokens, temperature=0.0)
    cached.chat([req])
    lat = []
    for _ in range(20):
        t0 = time.perf_counter()
        [r] = cached.chat([req])
        lat.append(time.perf_counter() - t0)
        assert r.cached
    t0 = time.perf_counter()
    batch = cached.chat([req] * 100)
    per = (time.perf_counter() - t0) / len(batch)
    print(
        f"cache hit: {statistics.median(lat) * 1000:.1f} ms per single-request chat() call, "
        f"{per * 1000:.2f} ms per request in a batch of 100"
    )
