"""Local model throughput: the gateway (litellm -> local provider) vs llama-cpp-python called
directly on the same chat prompt, plus the latency of a cache hit.

prompt tok/s = prompt tokens / time of a max_tokens=1 call; generation tok/s =
(generated - 1) / (time of the long call - time of the max_tokens=1 call). Both sides
evaluate the prompt from scratch each call (direct: ``Llama.reset()``; gateway:
``llm.prefix_reuse`` off), greedy decoding,
same thread count; runs are interleaved and the median of ``--repeats`` is reported.

    PYTHONPATH=. python benchmarks/bench_local_llm.py [--repeats 3] [--max-tokens 64]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

from ragcourt.core.params import LLMParams
from ragcourt.llm import ChatRequest, Gateway
from ragcourt.llm.local_provider import default_batch_threads, default_threads, get_model

MODEL = "local/smollm2-135m"
SYSTEM = "You are a careful assistant. Answer using only the context."
CONTEXT = (
    "Retrieval-augmented generation (RAG) combines a retriever, which finds passages in a "
    "document collection, with a generator, which writes an answer conditioned on them. "
    "Evaluating a RAG system means checking whether the retrieved passages are relevant, "
    "whether the answer is faithful to them, and whether it answers the question. "
)
USER = "Context:\n" + CONTEXT * 4 + "\nQuestion: Explain in detail how a RAG system is evaluated."


def direct_call(llm: object, max_tokens: int) -> tuple[float, int, int]:
    llm.reset()  # type: ignore[attr-defined]
    t0 = time.perf_counter()
    r = llm.create_chat_completion(  # type: ignore[attr-defined]
        [{"role": "system", "content": SYSTEM}, {"role": "user", "content": USER}],
        max_tokens=max_tokens,
        temperature=0.0,
    )
    dt = time.perf_counter() - t0
    return dt, r["usage"]["prompt_tokens"], r["usage"]["completion_tokens"]


def gateway_call(gw: Gateway, max_tokens: int) -> tuple[float, int, int]:
    req = ChatRequest.of(MODEL, SYSTEM, USER, max_tokens=max_tokens, temperature=0.0)
    t0 = time.perf_counter()
    [r] = gw.chat([req])
    dt = time.perf_counter() - t0
    assert r.ok, r.error
    return dt, r.prompt_tokens, r.completion_tokens


def rates(one: tuple[float, int, int], long: tuple[float, int, int]) -> tuple[float, float]:
    prompt_tps = one[1] / one[0]
    gen_tps = (long[2] - 1) / max(long[0] - one[0], 1e-9)
    return prompt_tps, gen_tps


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--max-tokens", type=int, default=64)
    args = ap.parse_args()
    from llama_cpp import Llama

    threads, batch_threads = default_threads(), default_batch_threads()
    gw = Gateway(  # prefix reuse off: the gateway, like the direct side, evaluates from scratch
        LLMParams(cache=False, cache_dir=tempfile.mkdtemp(prefix="bench_llm_"), prefix_reuse=False),
        "bench_local",
    )
    gateway_call(gw, 1)  # warm-up: litellm import, model load, sha256 memo
    path = get_model(MODEL, None).llm.model_path
    direct = Llama(
        model_path=path, n_ctx=8192, n_threads=threads, n_threads_batch=batch_threads, verbose=False
    )
    direct_call(direct, 1)

    res: dict[str, list[tuple[float, float]]] = {"direct": [], "gateway": []}
    tokens: dict[str, tuple[int, int]] = {}
    for _ in range(args.repeats):
        d1, dl = direct_call(direct, 1), direct_call(direct, args.max_tokens)
        g1, gl = gateway_call(gw, 1), gateway_call(gw, args.max_tokens)
        res["direct"].append(rates(d1, dl))
        res["gateway"].append(rates(g1, gl))
        tokens = {"direct": (d1[1], dl[2]), "gateway": (g1[1], gl[2])}

    med = {k: tuple(statistics.median(x[i] for x in v) for i in (0, 1)) for k, v in res.items()}
    print(
        f"threads: {threads} generation, {batch_threads} prompt; repeats: {args.repeats} (medians)"
    )
    for k in ("direct", "gateway"):
        p, g = med[k]
        n_p, n_g = tokens[k]
        print(
            f"{k:8s} prompt {p:7.1f} tok/s ({n_p} tokens)  generation {g:6.1f} tok/s ({n_g} tokens)"
        )
    print(
        f"ratio gateway/direct: prompt {med['gateway'][0] / med['direct'][0]:.2f}, "
        f"generation {med['gateway'][1] / med['direct'][1]:.2f} (target >= 0.9)"
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


if __name__ == "__main__":
    main()
