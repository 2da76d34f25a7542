"""One-off migration, run only by ``ragcourt cache migrate``: import an old diskcache reply
folder (``cache.db``, pickled values) into the JSON store. Nothing else imports this module.

Values load through ``DataOnlyUnpickler``, whose ``find_class`` always raises: only plain data
(dict, list, tuple, str, bytes, numbers, bool, None) can load, and a pickle that needs any
global (a class, a function, ``os.system``) is refused and counted; it never runs code. Each
loaded value must be a valid ``CachedReply``; keys must be sha256 hex text. The old file is then
moved aside to ``legacy-diskcache-<UTC>.db``. diskcache 5.x layout: table ``Cache(key, raw,
mode, filename, value, ...)``; ``raw=1`` keys are stored as is; ``mode`` 4 = pickle, inline in
``value`` or in the file ``filename`` (relative to the folder, ``ab/cd/<hex>.val``).
"""

from __future__ import annotations

import io
import os
import pickle
import re
import sqlite3
import stat
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from ragcourt.core.errors import RagcourtError
from ragcourt.llm.cache import LEGACY_NAME, CachedReply, ReplyCache

MODE_PICKLE = 4  # diskcache.core.MODE_PICKLE
_MAX_VALUE_BYTES = 64 * 2**20
_KEY = re.compile(r"[0-9a-f]{64}")
_LEGACY_COLUMNS = {"key", "raw", "mode", "filename", "value"}


class CacheMigrateError(RagcourtError):
    """The old cache file cannot be read as a diskcache folder (names the file)."""


class GlobalRefused(pickle.UnpicklingError):
    """A pickle asked for a global (class or function); refused, nothing was called."""


class DataOnlyUnpickler(pickle.Unpickler):
    """Unpickles plain data only: every global lookup (hence every call) is refused."""

    def find_class(self, module: str, name: str) -> object:
        raise GlobalRefused(f"global {module}.{name} refused")


def load_data_pickle(blob: bytes) -> object:
    """``pickle.loads`` restricted to plain data (raises ``GlobalRefused`` on any global)."""
    return DataOnlyUnpickler(io.BytesIO(blob)).load()


class MigrateReport(BaseModel):
    """Counts of one ``migrate_diskcache`` run; every old row is in exactly one count."""

    source: str
    rows: int = 0
    imported: int = 0
    already_present: int = 0  # the JSON store had the key already (kept)
    refused_globals: int = 0  # pickles that needed a global: refused, never executed
    invalid: int = 0  # not a pickle, not a reply, foreign key, missing or unsafe value file
    moved_to: str | None = None
    examples: list[str] = Field(default_factory=list)  # "row N: reason" of a few skipped rows


def _value_bytes(folder: Path, filename: object, inline: object) -> bytes:
    """The pickle bytes of one row: inline, or a regular file under ``folder`` (no links)."""
    if filename is None:
        if not isinstance(inline, bytes):
            raise ValueError(f"inline value is {type(inline).__name__}, not bytes")
        return inline
    if (
        not isinstance(filename, str)
        or Path(filename).is_absolute()
        or ".." in Path(filename).parts
    ):
        raise ValueError(f"value file name {str(filename)[:80]!r} is not a plain relative path")
    path = folder / filename
    if not path.resolve().is_relative_to(folder.resolve()):
        raise ValueError(f"value file {filename} is outside the cache folder")
    st = os.lstat(path)
    if not stat.S_ISREG(st.st_mode):
        raise ValueError(f"value file {filename} is not a regular file")
    if st.st_size > _MAX_VALUE_BYTES:
        raise ValueError(f"value file {filename} is larger than {_MAX_VALUE_BYTES} bytes")
    return path.read_bytes()


def _legacy_rows(legacy: Path) -> list[tuple[int, object, object, object, object, object]]:
    try:
        conn = sqlite3.connect(str(legacy))
    except sqlite3.Error as exc:
        raise CacheMigrateError(f"{legacy}: cannot open ({exc})") from None
    try:
        cols = {r[1] for r in conn.execute("PRAGMA table_info(Cache)")}
        if not cols.issuperset(_LEGACY_COLUMNS):
            raise CacheMigrateError(f"{legacy}: no diskcache Cache table (columns {sorted(cols)})")
        rows = conn.execute(
            "SELECT rowid, key, raw, mode, filename, value FROM Cache ORDER BY rowid"
        ).fetchall()
    except sqlite3.Error as exc:
        raise CacheMigrateError(f"{legacy}: not a readable diskcache database ({exc})") from None
    finally:
        conn.close()
    return [tuple(r) for r in rows]


def _move_legacy(legacy: Path) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    target = legacy.with_name(f"legacy-diskcache-{stamp}.db")
    os.replace(legacy, target)
    for suffix in ("-wal", "-shm"):
        side = legacy.with_name(legacy.name + suffix)
        if side.exists():
            os.replace(side, target.with_name(target.name + suffix))
    return target


def migrate_diskcache(directory: Path | str, legacy: Path | str | None = None) -> MigrateReport:
    """Import ``legacy`` (default ``<directory>/cache.db``) into ``directory``'s JSON store."""
    folder = Path(directory)
    old = Path(legacy) if legacy is not None else folder / LEGACY_NAME
    if not old.is_file():
        raise CacheMigrateError(f"{old}: no old diskcache file to migrate")
    rows = _legacy_rows(old)
    report = MigrateReport(source=str(old), rows=len(rows))
    cache = ReplyCache(folder)
    cache.warn_legacy = False

    def skip(rowid: int, why: str, refused: bool = False) -> None:
        if refused:
            report.refused_globals += 1
        else:
            report.invalid += 1
        if len(report.examples) < 10:
            report.examples.append(f"row {rowid}: {why}")

    try:
        for rowid, key, raw, mode, filename, value in rows:
            if raw != 1 or not isinstance(key, str) or not _KEY.fullmatch(key):
                skip(rowid, "key is not a sha256 hex string")
                continue
            if mode != MODE_PICKLE:
                skip(rowid, f"value mode {mode} is not a pickled reply")
                continue
            try:
                data = load_data_pickle(_value_bytes(old.parent, filename, value))
            except GlobalRefused as exc:
                skip(rowid, str(exc), refused=True)
                continue
            except Exception as exc:  # any malformed pickle / unreadable file is one counted row
                skip(rowid, f"unreadable value ({type(exc).__name__}: {exc})"[:200])
                continue
            try:
                reply = CachedReply.model_validate(data)
            except ValidationError as exc:
                skip(rowid, f"not a reply ({exc.errors()[0]['msg']})")
                continue
            if cache.get(key) is not None:
                report.already_present += 1
                continue
            cache.set(key, reply.model_dump(mode="json"))
            if cache.get(key) is None:
                raise CacheMigrateError(f"{cache.path}: the JSON store did not take row {rowid}")
            report.imported += 1
    finally:
        cache.close()
    report.moved_to = str(_move_legacy(old))
    return report
