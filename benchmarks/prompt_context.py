"""Prompt-reading speed of a local GGUF against the context already in the KV cache.

judge_retrieval's cost is prompt evaluation: after prefix reuse each passage is read with the
system prompt and question already in context. This script evaluates ``tail`` tokens of a demo
document after a ``prefix`` already evaluated, straight on llama-cpp-python (no gateway), for a
few (prefix, tail) shapes, with llama.cpp's flash attention off (ragcourt's setting) and on,
interleaved over ``--repeats`` rounds so both see the same machine load. Prints the best and
median milliseconds and tokens/s per shape, and the largest absolute difference of the last
token's logits between the two attention paths (flash attention is not bit-identical).

    python -m benchmarks prompt_context --model local/smollm2-135m --repeats 5
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Sequence

import numpy as np
import polars as pl

from ragcourt.core import catalog, offline
from ragcourt.llm.gguf_files import resolve_gguf
from ragcourt.llm.local_provider import default_batch_threads, registry_entry

SHAPES = ((0, 300), (300, 25), (300, 200), (500, 100), (0, 500))  # (prefix, tail) tokens


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--model", default="local/smollm2-135m")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    offline.apply()
    from llama_cpp import Llama

    name, entry = registry_entry(args.model, None)
    path = str(resolve_gguf(name, entry))
    threads = default_batch_threads()
    llms = {
        fa: Llama(
            model_path=path,
            n_ctx=entry.n_ctx,
            n_threads=threads,
            n_threads_batch=threads,
            verbose=False,
            flash_attn=fa,
        )
        for fa in (False, True)
    }
    text = "\n\n".join(pl.read_parquet(catalog.path("documents"))["text"].to_list()[:3])
    toks = llms[False].tokenize(text.encode("utf-8"), add_bos=True)
    need = max(p + t for p, t in SHAPES)
    if len(toks) < need:
        raise SystemExit(f"bench_prompt_context: demo documents give {len(toks)} < {need} tokens")
    times: dict[tuple[bool, int, int], list[float]] = {}
    for _ in range(args.repeats):
        for fa, llm in llms.items():
            for prefix, tail in SHAPES:
                llm.reset()  # type: ignore[no-untyped-call]
                if prefix:
                    llm.eval(toks[:prefix])
                t0 = time.perf_counter()
                llm.eval(toks[prefix : prefix + tail])
                times.setdefault((fa, prefix, tail), []).append(time.perf_counter() - t0)
    print(f"{args.model}: {threads} threads, {args.repeats} interleaved rounds")
    print("flash_attn | prefix | tail | best ms | median ms | tok/s (best) | tok/s (median)")
    for (fa, prefix, tail), ts in times.items():
        best, med = min(ts), statistics.median(ts)
        print(f"{fa!s:10s} | {prefix:6d} | {tail:4d} | {best * 1e3:7.0f} | {med * 1e3:9.0f} | "
              f"{tail / best:12.0f} | {tail / med:14.0f}")  # fmt: skip
    logits = []
    for llm in llms.values():
        llm.reset()  # type: ignore[no-untyped-call]
        llm.eval(toks[:400])
        ptr = llm._ctx.get_logits_ith(-1)
        logits.append(np.ctypeslib.as_array(ptr, shape=(llm.n_vocab(),)).copy())
        llm.close()
    diff = float(np.abs(logits[0] - logits[1]).max())
    print(f"last-token logits, flash attention off vs on: max |diff| {diff:.4f}")
