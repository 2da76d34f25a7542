"""Shard blocks, shard files and their keys, the merge in block order and the pruning of
shards another shard size left (``ragcourt.core.shards``), and the judge stages' row plans
(``ragcourt.judging.shard_plan``)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from ragcourt.core.schemas import frame_schema
from ragcourt.core.shards import (
    blocks,
    is_done,
    merge,
    prune,
    rows_digest,
    shard_file,
    shard_key,
    write_shard,
)
from ragcourt.judging.shard_plan import by_question, by_system, in_input_order, rows_of


def test_blocks_cover_every_item_once_in_order() -> None:
    assert blocks(7, 3) == [(0, 3), (3, 6), (6, 7)]
    assert blocks(6, 3) == [(0, 3), (3, 6)]
    assert blocks(5, 0) == [(0, 5)]  # 0: not sharded
    assert blocks(2, 10) == [(0, 2)]
    assert blocks(0, 3) == []


def _udcg(system: str, qids: list[str]) -> pl.DataFrame:
    rows = [(system, q, 1, ["c"], [True], [0.5], ["llm"], [0.5], 0.5, None) for q in qids]
    return pl.DataFrame(rows, schema=frame_schema("udcg"), orient="row")


def test_a_shard_is_done_only_with_its_own_key(tmp_path: Path) -> None:
    path = shard_file(tmp_path / "udcg", 3)
    assert path.name == "00003.parquet"
    df = _udcg("a", ["q1", "q2"])
    key = shard_key({"settings": 1, "rows": rows_digest(df)})
    assert not is_done(path, key)
    write_shard(df, path, "udcg", key)
    assert is_done(path, key)
    assert not is_done(path, shard_key({"settings": 2, "rows": rows_digest(df)}))
    path.write_bytes(b"half a file")  # a torn write is not done
    assert not is_done(path, key)


def test_merge_keeps_block_order_and_prune_removes_strays(tmp_path: Path) -> None:
    folder = tmp_path / "udcg"
    files = [shard_file(folder, b) for b in range(3)]
    for b, f in enumerate(files):
        write_shard(_udcg("a", [f"q{b}a", f"q{b}b"]), f, "udcg", "k")
    stray = shard_file(folder / "gone", 7)
    write_shard(_udcg("b", ["x"]), stray, "udcg", "k")
    merged = merge(files, "udcg")
    assert merged["question_id"].to_list() == ["q0a", "q0b", "q1a", "q1b", "q2a", "q2b"]
    assert merged.n_chunks() == 1
    assert prune(folder, files) == [stray]
    assert not stray.parent.exists() and all(f.is_file() for f in files)
    with pytest.raises(ValueError, match="no shards"):
        merge([], "udcg")


def test_row_plans_put_merged_rows_back_in_input_order() -> None:
    df = pl.DataFrame(
        {
            "system": ["a", "a", "a", "b", "b", "b"],
            "question_id": ["q1", "q2", "q3", "q1", "q2", "q3"],
            "x": [0, 1, 2, 3, 4, 5],
        }
    )
    per_system = by_system(df, 2)
    assert [(s.system, s.block, s.rows) for s in per_system] == [
        ("a", 0, (0, 1)),
        ("a", 1, (2,)),
        ("b", 0, (3, 4)),
        ("b", 1, (5,)),
    ]
    per_question = by_question(df, 2)
    assert [s.rows for s in per_question] == [(0, 1, 3, 4), (2, 5)]
    assert [s.label for s in per_question] == ["#0", "#1"]
    merged = pl.concat([rows_of(df, s) for s in per_question])
    assert in_input_order(merged, per_question).equals(df)
