"""Peak memory of the embed stage's index build and recall check, and of a streamed Parquet
read with and without pyarrow's pre-buffering, on a synthetic embeddings table.

The table holds ``--vectors`` seeded random unit vectors (384-d) written 64 rows to a row
group, as the embed stage writes them. Each measurement runs in a fresh process:

- ``build``: :func:`ragcourt.retrieval.indexing.build_streamed` (``auto`` index: Flat up to
  100,000 vectors, HNSW32 above) with the vector batches of each ``--batch``; peak RSS (VmHWM)
  before and after the recall check, the build seconds and a hash of the index bytes;
- ``read``: one pass of ``ParquetFile.iter_batches`` (2,048 rows) with ``pre_buffer`` on and
  off; the most bytes Arrow's pool held during the pass.

``python -m benchmarks index_build_memory --vectors 9846 100557 --batch 65536 8192 > out.json``
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

DIM = 384
ROW_GROUP = 64


def _hwm_rss() -> tuple[int, int]:
    """(peak, current) resident MB of this process."""
    status = Path("/proc/self/status").read_text()
    hwm = re.search(r"VmHWM:\s+(\d+)", status)
    rss = re.search(r"VmRSS:\s+(\d+)", status)
    assert hwm is not None and rss is not None
    return int(hwm.group(1)) // 1024, int(rss.group(1)) // 1024


def make_table(path: Path, n: int, seed: int = 0) -> None:
    import numpy as np

    from ragcourt.core.parquet_stream import BatchWriter
    from ragcourt.retrieval.indexing import embeddings_frame

    rng = np.random.default_rng(seed)
    with BatchWriter(path, "embeddings") as writer:
        for s in range(0, n, ROW_GROUP):
            k = min(ROW_GROUP, n - s)
            v = rng.standard_normal((k, DIM)).astype(np.float32)
            v /= np.linalg.norm(v, axis=1, keepdims=True)
            writer.write(embeddings_frame([f"c{s + i:07d}" for i in range(k)], v))


def child_build(path: Path, n: int, batch: int) -> dict[str, Any]:
    import faiss

    from ragcourt.retrieval import indexing
    from ragcourt.retrieval.long_chunks import LongChunkStats
    from ragcourt.retrieval.params import EmbedderSpec

    stream = indexing.vector_batches
    setattr(indexing, "vector_batches", lambda p, size=batch: stream(p, size))  # noqa: B010
    marks: dict[str, tuple[int, int]] = {"start": _hwm_rss()}
    exact = getattr(indexing, "exact_top")  # noqa: B009

    def timed_exact(*args: Any) -> Any:
        marks["before_recall_check"] = _hwm_rss()
        return exact(*args)

    setattr(indexing, "exact_top", timed_exact)  # noqa: B010
    long = LongChunkStats("c", "e", "m", "truncate", 32, 0, n, 0, 10, n, 1)
    t0 = time.perf_counter()
    index, build_s, recall, n_query = indexing.build_streamed(
        path, EmbedderSpec(model="all-minilm-l6-v2"), long, DIM, "bench"
    )
    marks["end"] = _hwm_rss()
    digest = hashlib.sha256(faiss.serialize_index(index).tobytes()).hexdigest()[:16]
    return {
        "vectors": n,
        "batch": batch,
        "peak_rss_mb": marks["end"][0],
        "rss_mb_at": {k: {"peak": v[0], "current": v[1]} for k, v in marks.items()},
        "build_s": round(build_s, 1),
        "wall_s": round(time.perf_counter() - t0, 1),
        "recall_at_10": recall,
        "recall_queries": n_query,
        "index_sha256_16": digest,
    }


def child_read(path: Path, pre_buffer: bool) -> dict[str, Any]:
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    t0, most = time.perf_counter(), 0
    for _ in pq.ParquetFile(path, pre_buffer=pre_buffer).iter_batches(batch_size=2048):
        most = max(most, pa.total_allocated_bytes())
    return {
        "pre_buffer": pre_buffer,
        "arrow_pool_peak_mb": round(most / 2**20, 1),
        "table_mb": round(path.stat().st_size / 2**20, 1),
        "pass_s": round(time.perf_counter() - t0, 3),
        "peak_rss_mb": _hwm_rss()[0],
    }


def _run_child(*args: str) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "benchmarks", "index_build_memory", "--child", *args]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return result


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vectors", type=int, nargs="+", default=[9846, 100557])
    ap.add_argument("--batch", type=int, nargs="+", default=[65536, 8192])
    ap.add_argument("--child", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        kind, path, *rest = args.child
        if kind == "build":
            res = child_build(Path(path), int(rest[0]), int(rest[1]))
        else:
            res = child_read(Path(path), rest[0] == "1")
        print(json.dumps(res))
        return
    with tempfile.TemporaryDirectory(prefix="bench_index_mem_") as tmp:
        results: dict[str, Any] = {"build": [], "read": []}
        for n in args.vectors:
            table = Path(tmp) / f"emb_{n}.parquet"
            make_table(table, n)
            for batch in args.batch:
                results["build"].append(_run_child("build", str(table), str(n), str(batch)))
                print(json.dumps(results["build"][-1]), file=sys.stderr)
            for pre in ("1", "0"):
                results["read"].append(_run_child("read", str(table), pre) | {"vectors": n})
        print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
