"""Benchmark the JSON reply store: open time (quick_check + schema check), writes/s, reads/s.

Builds a fresh store of ``--entries`` replies of about ``--text-chars`` characters each in a
temp folder (nothing under the project), then times, in this one process:
open = first ``get`` of a new ``ReplyCache`` on the full store (the integrity check every stage
pays once); writes/s = ``set`` calls per second while filling; reads/s = ``get`` hits per second
(JSON parse + pydantic validation included); verify = ``verify()`` over every entry.

    python -m benchmarks reply_cache --entries 20000 --text-chars 1500
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from ragcourt.llm.cache import ReplyCache


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entries", type=int, default=20_000)
    ap.add_argument("--text-chars", type=int, default=1_500)
    ap.add_argument("--reads", type=int, default=5_000)
    args = ap.parse_args(argv)
    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "cache"
        cache = ReplyCache(folder)
        keys = [f"{rng.getrandbits(256):064x}" for _ in range(args.entries)]
        text = "word " * (args.text_chars // 5)
        t0 = time.perf_counter()
        for i, key in enumerate(keys):
            cache.set(key, {"text": f"{i} {text}", "prompt_tokens": 100, "completion_tokens": 50})
        write_s = time.perf_counter() - t0
        cache.close()
        size = sum(p.stat().st_size for p in folder.glob("replies.sqlite3*"))

        fresh = ReplyCache(folder)
        t0 = time.perf_counter()
        fresh.get(keys[0])
        open_s = time.perf_counter() - t0
        sample = [rng.choice(keys) for _ in range(args.reads)]
        t0 = time.perf_counter()
        hits = sum(fresh.get(k) is not None for k in sample)
        read_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        report = fresh.verify()
        verify_s = time.perf_counter() - t0
        fresh.close()
    print(f"entries: {args.entries}  text chars: {args.text_chars}  store: {size / 2**20:.1f} MiB")
    print(f"writes/s: {args.entries / write_s:.0f}")
    print(f"open (quick_check + schema): {open_s * 1000:.0f} ms")
    print(f"reads/s: {args.reads / read_s:.0f}  (hits {hits}/{args.reads})")
    print(f"verify: {verify_s:.2f} s  ok {report.entries_ok}  damaged {report.entries_damaged}")
