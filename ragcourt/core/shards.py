"""Shards of a stage: blocks of items that one task computes into its own Parquet file.

A stage's work of ``n`` items splits into blocks of at most ``size`` (``scale.*`` params; 0:
one block, the stage unsharded): block ``b`` covers items ``[b*size, min((b+1)*size, n))``.
A shard file lives in the stage's shard folder (a catalog artifact), named by its block
(``00003.parquet``), and carries a key in its Parquet metadata (``ragcourt.shard_key``): the
sha256 of what made it (the stage's settings, its input rows and, via :func:`shard_key`, the
library's code). A shard is **done** when its file reads and its key matches: a stage computes
only the shards that are not done (a killed run resumes where it stopped) and merges the shard
files in block order, so the merged table has the same rows, in the same order, as one call
over every item.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from ragcourt.core.fingerprint import file_sha256, object_sha256
from ragcourt.core.io import write_with
from ragcourt.core.schemas import check

META_KEY = "ragcourt.shard_key"
PACKAGE_DIR = Path(__file__).resolve().parents[1]  # the installed ragcourt package


@dataclass(frozen=True)
class Shard:
    """One shard task of a stage call: the keyword arguments that select it (added to the
    stage function's ``(params, **kwargs)``), the files it writes and a label for its id."""

    kwargs: tuple[tuple[str, Any], ...]
    outputs: tuple[str, ...]
    label: str


def blocks(n: int, size: int) -> list[tuple[int, int]]:
    """``[lo, hi)`` of every block of ``n`` items, at most ``size`` each (``size`` 0: one
    block of all; ``n`` 0: no block)."""
    if n <= 0:
        return []
    if size <= 0 or size >= n:
        return [(0, n)]
    return [(lo, min(lo + size, n)) for lo in range(0, n, size)]


def shard_file(folder: Path, block: int) -> Path:
    """The file of block ``block`` in ``folder``."""
    return folder / f"{block:05d}.parquet"


_code: dict[str, str] = {}


def code_fingerprint() -> str:
    """sha256 over (path, sha256) of every ``.py`` file of the ragcourt package (memoised):
    a shard made by other code is not reused."""
    if "all" not in _code:
        files = sorted(PACKAGE_DIR.rglob("*.py"))
        _code["all"] = object_sha256(
            {f.relative_to(PACKAGE_DIR).as_posix(): file_sha256(f) for f in files}
        )
    return _code["all"]


def shard_key(record: Any) -> str:
    """The key of a shard made from ``record`` (JSON-able: settings, input rows) by this code."""
    return object_sha256({"record": record, "code": code_fingerprint()})


def rows_digest(df: pl.DataFrame) -> str:
    """sha256 of a frame's rows (JSON of every value, in order)."""
    return object_sha256(df.rows())


def is_done(path: Path, key: str) -> bool:
    """True when ``path`` is a readable Parquet file whose shard key is ``key``."""
    if not path.is_file():
        return False
    try:
        return pl.read_parquet_metadata(path).get(META_KEY) == key
    except Exception:  # an unreadable shard is made again
        return False


def write_shard(df: pl.DataFrame, path: Path, table: str, key: str) -> Path:
    """Write one shard (checked against ``table``'s schema) with its key, renamed into place
    at once (durable: a killed run finds every shard it finished)."""
    check(df, table, path)
    meta = {META_KEY: key}
    return write_with(
        path,
        lambda tmp: df.write_parquet(tmp, compression="zstd", statistics=True, metadata=meta),
        durable=True,
    )


def merge(paths: Iterable[Path], table: str) -> pl.DataFrame:
    """The shard files concatenated in the given order, as one contiguous frame."""
    frames = [pl.read_parquet(p) for p in paths]
    if not frames:
        raise ValueError(f"no shards of table '{table}' to merge")
    merged = pl.concat(frames, how="vertical").rechunk()
    check(merged, table, Path(table))
    return merged


def prune(folder: Path, keep: Iterable[Path]) -> list[Path]:
    """Delete the shard files under ``folder`` that ``keep`` does not list (a smaller shard
    size or a system no longer configured left them) and empty sub-folders; returns them."""
    if not folder.is_dir():
        return []
    kept = {p.resolve() for p in keep}
    gone = [p for p in sorted(folder.rglob("*.parquet")) if p.resolve() not in kept]
    for p in gone:
        p.unlink(missing_ok=True)
    for d in sorted((d for d in folder.rglob("*") if d.is_dir()), reverse=True):
        if not any(d.iterdir()):
            d.rmdir()
    return gone
