"""Atomic artifact I/O: write to a temp file in the target folder, then rename.

Inside ``with output_set():`` (every stage run, both engines) the renames wait until the
block ends: on success, or on :class:`~ragcourt.core.errors.StageFailed` (the outputs are
complete and hold the error rows), every output is renamed into place in write order; on any
other exception the temp files are removed and the previous outputs stay as they were. A
write marked ``durable=True`` (resume state: answer partitions, digest memos) is renamed at
once, because a killed run must find it.

``read_table`` checks the schema of what it reads, so a stage fails with a one-line
SchemaError naming the file and column instead of a KeyError deep inside.

Temp files are named ``.<target name>.<32 hex>.<suffix>`` (:func:`temp_path`; the repository's
``.dvcignore`` ignores the pattern, so DVC never counts one as part of an output). A process
killed mid-write (SIGKILL) leaves its temp behind; :func:`sweep_stale_temps`, called when a
stage starts for its own outputs, removes them.
"""

from __future__ import annotations

import errno
import fnmatch
import json
import os
import re
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import polars as pl

from ragcourt.core.errors import RagcourtError, StageFailed
from ragcourt.core.schemas import check

# (temp, target) pairs written inside the innermost active output_set, in write order
_PENDING: ContextVar[list[tuple[Path, Path]] | None] = ContextVar(
    "ragcourt_output_set", default=None
)


@contextmanager
def output_set() -> Iterator[list[tuple[Path, Path]]]:
    """Commit every non-durable write of the block together (see the module docstring).

    Nested sets join the outermost one. Yields the pending ``(temp, target)`` list. Writes
    from threads the block starts (which do not inherit the context) are not deferred.
    """
    if _PENDING.get() is not None:
        yield _PENDING.get() or []
        return
    pending: list[tuple[Path, Path]] = []
    token = _PENDING.set(pending)
    try:
        yield pending
    except StageFailed:
        _commit(pending)
        raise
    except BaseException:
        for tmp, _ in pending:
            tmp.unlink(missing_ok=True)
        raise
    else:
        _commit(pending)
    finally:
        _PENDING.reset(token)


def _commit(pending: list[tuple[Path, Path]]) -> None:
    """Rename each temp onto its target; a target written twice keeps the last write."""
    last = {target: tmp for tmp, target in pending}
    for tmp, target in pending:
        if last[target] is tmp:
            os.replace(tmp, target)
        else:
            tmp.unlink(missing_ok=True)


#: ``.<target name>.<uuid4 hex>.<suffix>``: the name of every temp file :func:`atomic_path` makes
TEMP_NAME = re.compile(r"^\.(?P<target>.+)\.[0-9a-f]{32}(?P<suffix>\.[^.]+)$")
#: the same names as a .dvcignore (gitignore-style) pattern
TEMP_IGNORE_PATTERN = "." + "*." + "?" * 32 + ".*"


def temp_path(path: Path, suffix: str = ".tmp") -> Path:
    """A fresh temp name for ``path`` in its folder (:data:`TEMP_NAME`)."""
    return path.parent / f".{path.name}.{uuid.uuid4().hex}{suffix}"


def stale_temps(target: Path | str) -> list[Path]:
    """The temp files :func:`atomic_path` made for ``target`` and left behind; ``target``'s
    file name may be a glob (``*.parquet``: every partition of a folder)."""
    target = Path(target)
    folder = target.parent
    if not folder.is_dir():
        return []
    found = []
    for entry in folder.iterdir():
        m = TEMP_NAME.match(entry.name)
        if (
            m is not None
            and fnmatch.fnmatchcase(m["target"], target.name)
            and m["suffix"] in (".tmp", Path(m["target"]).suffix)
            and entry.is_file()
        ):
            found.append(entry)
    return sorted(found)


def sweep_stale_temps(targets: Iterable[Path | str]) -> list[Path]:
    """Remove the temp files a killed earlier run left for ``targets`` (a stage's own outputs,
    globs allowed: :func:`stale_temps`); returns what was removed. Call it before the stage
    writes anything: a temp of a write in progress for the same targets would go too."""
    removed = []
    for target in targets:
        for tmp in stale_temps(target):
            tmp.unlink(missing_ok=True)
            removed.append(tmp)
    return removed


_FULL = (errno.ENOSPC, errno.EDQUOT)


def is_disk_full(err: BaseException) -> bool:
    """``err`` (an OSError, or a library's wrapper of one, e.g. polars' "os error 28") means
    the device or the quota is full."""
    if isinstance(err, OSError) and err.errno in _FULL:
        return True
    text = str(err)
    return "No space left on device" in text or "Disk quota exceeded" in text


def disk_full(path: Path) -> RagcourtError:
    """The one-line error of a write that ran out of space."""
    return RagcourtError(
        f"{path}: no space left on the device (disk or quota full); nothing was half-written "
        "(the previous file, if any, is unchanged): free space and rerun"
    )


@contextmanager
def atomic_path(path: Path | str, suffix: str = ".tmp", durable: bool = False) -> Iterator[Path]:
    """Yield a temp path next to ``path``; rename onto ``path`` only if the block succeeds
    (inside an :func:`output_set` and not ``durable``: when the set commits).

    The temp file is created (uniquely, ``O_EXCL``) with mode 0o666 so the kernel applies the
    umask, giving the mode an ordinary ``open(path, "w")`` would (not mkstemp's 0600);
    ``os.replace`` keeps it.
    """
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp_path = temp_path(path, suffix)
        os.close(os.open(tmp_path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666))
    except OSError as err:
        if err.errno in _FULL:
            raise disk_full(path) from None
        raise
    pending = None if durable else _PENDING.get()
    deferred = False
    try:
        yield tmp_path
        if pending is not None:
            pending.append((tmp_path, path))
            deferred = True
        else:
            os.replace(tmp_path, path)
    except Exception as err:
        if is_disk_full(err):  # the temp file goes; the previous output stays as it was
            raise disk_full(path) from None
        raise
    finally:
        if not deferred and tmp_path.exists():
            tmp_path.unlink()


def write_parquet(df: pl.DataFrame, path: Path | str, table: str | None = None) -> Path:
    """Atomically write ``df`` as Parquet (zstd); check against ``table`` first if given."""
    path = Path(path)
    if table is not None:
        check(df, table, path)
    with atomic_path(path) as tmp:
        df.write_parquet(tmp, compression="zstd", statistics=True)
    return path


def read_table(
    path: Path | str, table: str | None = None, columns: list[str] | None = None
) -> pl.DataFrame:
    """Read a Parquet artifact, checking it against ``table``; clear error if absent.

    With ``columns``, the whole file's schema (from the Parquet footer) is still checked
    against ``table``, but only those columns are loaded (e.g. ``chunk_id`` of a large
    embeddings table).
    """
    path = Path(path)
    if not path.is_file():
        raise RagcourtError(f"{path}: input artifact not found (run the stage that makes it)")
    try:
        if columns is not None and table is not None:
            check(pl.DataFrame(schema=pl.read_parquet_schema(path)), table, path)
        df = pl.read_parquet(path, columns=columns)
    except RagcourtError:
        raise
    except Exception as err:  # polars raises several types for corrupt files / missing columns
        raise RagcourtError(f"{path}: not a readable Parquet file ({err})") from None
    if table is not None and columns is None:
        check(df, table, path)
    return df


def write_json(obj: Any, path: Path | str, durable: bool = False) -> Path:
    """Atomically write JSON (sorted keys, indent 2) - used for DVC metrics files."""
    path = Path(path)
    with atomic_path(path, durable=durable) as tmp:
        tmp.write_text(json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n")
    return path


def write_text(text: str, path: Path | str) -> Path:
    """Atomically write a text file (markdown, HTML)."""
    path = Path(path)
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return path


def write_with(path: Path | str, writer: Callable[[Path], None], durable: bool = False) -> Path:
    """Atomically produce ``path`` with ``writer(tmp_path)`` (FAISS index, PNG plot, ...)."""
    path = Path(path)
    with atomic_path(path, suffix=path.suffix or ".tmp", durable=durable) as tmp:
        writer(tmp)
    return path
