"""read_batches holds a batch, not the file: Arrow's allocated bytes while reading stay far
below the file's size (pyarrow's pre-buffering would fetch every row group first)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa  # type: ignore[import-untyped]
import pytest

from ragcourt.core.errors import RagcourtError
from ragcourt.core.parquet_stream import BatchWriter, read_batches
from ragcourt.retrieval.indexing import embeddings_frame


def _table(path: Path, groups: int, rows: int, dim: int) -> np.ndarray:
    rng = np.random.default_rng(7)
    vecs = rng.standard_normal((groups * rows, dim)).astype(np.float32)
    with BatchWriter(path, "embeddings") as writer:
        for g in range(groups):
            part = vecs[g * rows : (g + 1) * rows]
            writer.write(embeddings_frame([f"c{g}-{i}" for i in range(rows)], part))
    return vecs


def test_reading_holds_a_batch_not_the_whole_file(tmp_path: Path) -> None:
    path = tmp_path / "emb.parquet"
    vecs = _table(path, groups=120, rows=64, dim=256)  # 7.9 MB of float32
    peak, got = 0, []
    for frame in read_batches(path, "embeddings", 256):
        peak = max(peak, pa.total_allocated_bytes())
        got.append(np.array(frame["embedding"].to_numpy(), copy=True))  # not Arrow's buffers
    assert np.array_equal(np.concatenate(got), vecs)
    assert peak < vecs.nbytes / 8, f"{peak} bytes allocated while reading {vecs.nbytes}"


def test_batches_are_consecutive_rows_of_the_requested_size(tmp_path: Path) -> None:
    path = tmp_path / "emb.parquet"
    _table(path, groups=3, rows=5, dim=4)
    frames = list(read_batches(path, "embeddings", 4, columns=["chunk_id"]))
    assert [f.height for f in frames] == [4, 4, 4, 3]
    assert frames[0].columns == ["chunk_id"]
    assert frames[1]["chunk_id"].to_list() == ["c0-4", "c1-0", "c1-1", "c1-2"]


def test_a_missing_file_is_one_line_naming_it(tmp_path: Path) -> None:
    with pytest.raises(RagcourtError, match=r"nope\.parquet: input artifact not found"):
        next(read_batches(tmp_path / "nope.parquet", "embeddings", 4))
