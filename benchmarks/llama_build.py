"""Prompt and generation speed of llama.cpp load/build options, side by side in one run.

Variants (each in its own child process, so each loads its own llama.cpp library):

- ``native``: today's build (native CPU flags), extra buffer types on (the repacked kernels);
- ``native-no-extra-bufts``: the same build loaded with ``use_extra_bufts = False`` (what
  ragcourt does on a CPU with AMX, where the AMX repacking path crashes);
- ``portable``: a build without native flags (AVX2, no AVX-512, no AMX), extra buffer types on;
  given as ``--portable-site DIR``, a folder holding that build's ``llama_cpp`` package
  (``pip install --no-deps --target DIR <wheel>``); skipped without it;
- any other build as ``--site LABEL=DIR`` (repeatable), extra buffer types on.

"native" is the build installed in the running environment (on a CPU with AMX,
``scripts/install.sh`` installs the portable one there).

Each child loads the model, warms up, then times the evaluation of the prompt from an empty KV
cache (prompt tok/s) and the greedy decoding of ``--max-tokens`` tokens one at a time, the end
of generation ignored (generation tok/s). Repeats rotate the variant order; the table gives
medians and the ratio to ``native``, and says whether each variant wrote native's text
(repacked kernels may round differently).

    python -m benchmarks llama_build --model smollm2-135m --repeats 5 \\
        [--portable-site /tmp/llama-portable/site]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TypedDict

CHILD = r"""
import json, sys, time
from ragcourt.core import offline
offline.apply()
from ragcourt.llm import local_provider as lp
from ragcourt.llm.cpu_features import llama_system_info, use_extra_bufts

name, max_tokens, repeat = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
system = "You are a careful assistant. Answer using only the context."
context = ("Retrieval-augmented generation combines a retriever, which finds passages in a "
           "document collection, with a generator, which writes an answer conditioned on them. ")
user = ("Context:\n" + context * repeat + "\nWrite the numbers from 1 to 200 in words, separated "
        "by commas, and nothing else.")
msgs = [{"role": "system", "content": system}, {"role": "user", "content": user}]
lm = lp.get_model("local/" + name, None)

def prompt_once():
    ids = lm.prompt_tokens(msgs)
    t0 = time.perf_counter()
    lm.eval_prompt(ids, reuse=False)
    return time.perf_counter() - t0, ids

def decode(n):
    # greedy decoding of n tokens, end-of-generation ignored: the generation rate alone
    toks, t0 = [], time.perf_counter()
    for _ in range(n):
        tok = int(lm.last_logits().argmax())
        toks.append(tok)
        lm.llm.eval([tok])
    return time.perf_counter() - t0, toks

prompt_once(); decode(4)
p_time, ids = prompt_once()
g_time, toks = decode(max_tokens)
print(json.dumps({"prompt_tps": len(ids) / p_time, "gen_tps": max_tokens / g_time,
                  "prompt_tokens": len(ids),
                  "text": lm.llm.detokenize(toks).decode("utf-8", errors="replace"),
                  "extra_bufts": use_extra_bufts(),
                  "system_info": llama_system_info().strip()}))
"""


class ChildResult(TypedDict):
    """The last stdout line of one variant's child process (``CHILD``)."""

    prompt_tps: float
    gen_tps: float
    prompt_tokens: int
    text: str
    extra_bufts: bool
    system_info: str


def run_child(
    model: str, max_tokens: int, env_extra: dict[str, str], site: str | None, repeat: int = 8
) -> ChildResult:
    env = dict(os.environ, **env_extra)
    root = str(Path(__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (site, root, env.get("PYTHONPATH")) if p)
    out = subprocess.run(
        [sys.executable, "-c", CHILD, model, str(max_tokens), str(repeat)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if out.returncode != 0:
        raise SystemExit(f"variant failed (exit {out.returncode}): {out.stderr.strip()[-500:]}")
    result: ChildResult = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--max-tokens", type=int, default=48)
    ap.add_argument("--portable-site", default=None)
    ap.add_argument("--site", action="append", default=[], metavar="LABEL=DIR")
    ap.add_argument(
        "--context-repeat", type=int, default=8, help="copies of the context sentence (length)"
    )
    args = ap.parse_args(argv)
    variants: list[tuple[str, dict[str, str], str | None]] = [
        ("native", {"RAGCOURT_LLAMA_EXTRA_BUFTS": "1"}, None),
        ("native-no-extra-bufts", {"RAGCOURT_LLAMA_EXTRA_BUFTS": "0"}, None),
    ]
    if args.portable_site:
        variants.append(("portable", {"RAGCOURT_LLAMA_EXTRA_BUFTS": "1"}, args.portable_site))
    for spec in args.site:
        label, sep, site = spec.partition("=")
        if not sep or not label or not site:
            raise SystemExit(f"--site {spec!r}: expected LABEL=DIR")
        variants.append((label, {"RAGCOURT_LLAMA_EXTRA_BUFTS": "1"}, site))
    runs: dict[str, list[ChildResult]] = {v[0]: [] for v in variants}
    for rep in range(args.repeats):
        order = variants[rep % len(variants) :] + variants[: rep % len(variants)]
        for label, env, site in order:
            runs[label].append(
                run_child(args.model, args.max_tokens, env, site, args.context_repeat)
            )
    base_p = statistics.median(r["prompt_tps"] for r in runs["native"])
    base_g = statistics.median(r["gen_tps"] for r in runs["native"])
    texts = {label: {r["text"] for r in rs} for label, rs in runs.items()}
    print(
        f"model {args.model}, {args.repeats} repeats, {args.max_tokens} new tokens, "
        f"{runs['native'][0]['prompt_tokens']} prompt tokens, cores {os.cpu_count()}"
    )
    print(f"{'variant':24} {'prompt tok/s':>13} {'ratio':>6} {'gen tok/s':>10} {'ratio':>6}")
    for label, rs in runs.items():
        p = statistics.median(r["prompt_tps"] for r in rs)
        g = statistics.median(r["gen_tps"] for r in rs)
        print(f"{label:24} {p:13.1f} {p / base_p:6.2f} {g:10.1f} {g / base_g:6.2f}")
    for label, seen in texts.items():
        same = "the same text" if seen == texts["native"] else "another text than native"
        print(f"{label}: {len(seen)} distinct text(s) over the repeats, {same}")
    for label, rs in runs.items():
        print(f"{label}: extra_bufts={rs[0]['extra_bufts']}; {rs[0]['system_info']}")
