"""Disk cache of model replies: JSON in one SQLite file, keyed on all that determines a reply.

key = sha256 of canonical JSON of (model, messages, temperature, max_tokens, seed, stop,
top_logprobs, response_format, candidate labels, cache format version). Only the request
content and the normalised reply (a ``CachedReply``: text, usage, logprobs) are stored: no
headers, no API keys. Failed calls are never cached, so a re-run retries them.

Store: ``<cache_dir>/replies.sqlite3``, one table ``replies(key TEXT PRIMARY KEY, value TEXT)``
whose value is canonical JSON; nothing is ever unpickled. WAL journal + busy timeout let
several processes read and write at once; a write is one upsert (last writer wins, and equal
requests give equal content). Damage never stops a stage: an entry that is not JSON or not a
``CachedReply`` is a miss and is deleted (counted in ``damaged_entries``); a file that is not a
healthy store (not a database, ``PRAGMA quick_check`` fails, wrong schema) is moved aside to
``damaged-<UTC time>.db`` with a warning and a fresh store is built. ``claim(key)`` holds an
``flock`` on ``inflight/<key>.lock`` around a model call, so a second process (or coroutine)
with the same uncached request waits for the first one's reply instead of calling the model.
Old pickled diskcache folders (``cache.db``) are never read here: ``ragcourt cache migrate``.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import json
import logging
import math
import os
import re
import sqlite3
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ragcourt.core.user_json import loads_user_json
from ragcourt.llm.types import ChatRequest, PositionLogprobs

log = logging.getLogger("ragcourt.llm.cache")

CACHE_FORMAT = 1  # bump when the stored value layout changes
STORE_NAME = (
    "replies.sqlite3"  # the JSON store (a new name: an old pickled cache.db is never opened)
)
LEGACY_NAME = "cache.db"  # diskcache's file: read only by ``cache_migrate``
SCHEMA_VERSION = 1  # PRAGMA user_version of the store
_OPEN_LOCK = "replies.lock"
_INFLIGHT_DIR = "inflight"
_COLUMNS = [("key", "TEXT", 1), ("value", "TEXT", 0)]
_KEY = re.compile(r"[0-9a-f]{64}")
_BUSY_TIMEOUT_S = 30.0
_MAX_DB_ERRORS = 3  # after this many failed queries the cache is off for the rest of the run


def cache_key(req: ChatRequest, extra: dict[str, Any] | None = None) -> str:
    """Hex sha256 over the request fields that can change the reply (``tag`` excluded)."""
    payload = {
        "v": CACHE_FORMAT,
        "model": req.model,
        "messages": [list(m) for m in req.messages],
        "temperature": req.temperature,
        "max_tokens": req.max_tokens,
        "seed": req.seed,
        "stop": list(req.stop) if req.stop else None,
        "top_logprobs": req.top_logprobs,
        "json_mode": req.json_mode,
        "extra": extra or {},
    }
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


LOGPROB_SLACK = 1e-4  # a stored log-probability may be this far above 0 (float noise)


class CachedReply(BaseModel):
    """One stored reply: what the gateway writes (``_to_cache``) and reads back."""

    model_config = ConfigDict(extra="forbid")

    text: str
    prompt_tokens: int = Field(0, ge=0)
    completion_tokens: int = Field(0, ge=0)
    cost_usd: float = Field(0.0, ge=0.0)
    finish_reason: str | None = None
    logprobs: list[PositionLogprobs] | None = None
    candidate_logprobs: dict[str, tuple[str, float]] | None = None

    @model_validator(mode="after")
    def _log_probabilities(self) -> CachedReply:
        """Every log-probability is a log of a probability: <= 0 (float noise up to
        :data:`LOGPROB_SLACK` allowed), never NaN; -inf is a probability of 0."""
        values = [v for _, v in (self.candidate_logprobs or {}).values()]
        for pos in self.logprobs or []:
            values.append(pos.logprob)
            values += [t.logprob for t in pos.top_logprobs]
        bad = next((v for v in values if math.isnan(v) or v > LOGPROB_SLACK), None)
        if bad is not None:
            raise ValueError(f"log-probability {bad!r} is not a log of a probability")
        return self


class VerifyReport(BaseModel):
    """What ``ReplyCache.verify`` found: file damage, or per-entry ok / damaged counts."""

    path: str
    file_damage: str | None = None  # why the store file is not a healthy store
    moved_to: str | None = None  # where a damaged file went (``repair``)
    entries_ok: int = 0
    entries_damaged: int = 0
    entries_removed: int = 0
    examples: list[str] = Field(default_factory=list)  # "key: reason" of a few damaged entries

    @property
    def damage_left(self) -> bool:
        """True when damage was found and not repaired."""
        file_left = self.file_damage is not None and self.moved_to is None
        return file_left or self.entries_removed < self.entries_damaged


def canonical_json(value: Any) -> str:
    """Sorted keys, no spaces, UTF-8 text (Python's ``json``: ±Infinity log-probs allowed)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def parse_entry(value: object) -> CachedReply | str:
    """The stored JSON text as a ``CachedReply``, or the reason it is damaged."""
    if not isinstance(value, str):
        return f"value is {type(value).__name__}, not JSON text"
    try:
        data = loads_user_json(value)  # bounded depth: a deep value is damage, not a crash
    except ValueError as exc:
        return f"not JSON ({exc})"
    try:
        return CachedReply.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "value"
        return f"not a reply ({where}: {err['msg']})"


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc).strip() or 'no message'}"


def check_store_file(path: Path) -> str | None:
    """Why the file at ``path`` is not a healthy reply store (None: healthy or empty DB)."""
    try:
        conn = sqlite3.connect(str(path), timeout=_BUSY_TIMEOUT_S)
    except sqlite3.Error as exc:
        return _describe(exc)
    try:
        rows = conn.execute("PRAGMA quick_check").fetchall()
        if rows != [("ok",)]:
            return f"quick_check: {'; '.join(str(r[0]) for r in rows[:3])}"
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        if not tables:
            return None  # an empty database (e.g. a 0-byte file): the schema is created on open
        if tables != ["replies"]:
            return f"wrong schema: tables {sorted(tables)}, expected ['replies']"
        cols = [(r[1], str(r[2]).upper(), r[5]) for r in conn.execute("PRAGMA table_info(replies)")]
        if cols != _COLUMNS:
            return f"wrong schema: replies columns {cols}"
        (version,) = conn.execute("PRAGMA user_version").fetchone()
        if version != SCHEMA_VERSION:
            return f"wrong schema: user_version {version}, expected {SCHEMA_VERSION}"
        return None
    except sqlite3.Error as exc:
        return _describe(exc)
    finally:
        conn.close()


@contextmanager
def _flock(path: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``path`` (created if missing) for the block."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _open_store(path: Path) -> sqlite3.Connection:
    """Connect (autocommit), WAL + busy timeout, create the table if missing."""
    conn = sqlite3.connect(
        str(path), timeout=_BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
    )
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(_BUSY_TIMEOUT_S * 1000)}")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, value TEXT)")
        (version,) = conn.execute("PRAGMA user_version").fetchone()
        if version == 0:
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    except BaseException:
        conn.close()
        raise
    return conn


def _sidecars(path: Path) -> list[Path]:
    return [path.with_name(path.name + s) for s in ("-wal", "-shm", "-journal")]


class ReplyCache:
    """A folder holding the JSON reply store; a disabled cache stores and returns nothing."""

    def __init__(
        self, directory: Path | str, enabled: bool = True, *, claim_timeout_s: float = 900.0
    ) -> None:
        self.directory = Path(directory)
        self.enabled = enabled
        self.path = self.directory / STORE_NAME
        self.claim_timeout_s = claim_timeout_s
        self.damaged_entries = 0  # entries dropped as damaged by this instance
        self.moved_aside: list[Path] = []  # damaged store files this instance moved aside
        self._conn: sqlite3.Connection | None = None
        self._pid = 0
        self._lock = threading.RLock()
        self._db_errors = 0
        self._damage_reported = 0
        self.warn_legacy = True  # warn once when an old pickled cache.db sits in the folder
        self._off_reason: str | None = None  # set when the store cannot be used this run

    # ------------------------------------------------------------------ opening
    def _move_aside(self, reason: str) -> Path:
        """Rename the damaged store (and its WAL) to ``damaged-<UTC>.db``; warn naming it."""
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        target = self.directory / f"damaged-{stamp}.db"
        n = 1
        while target.exists():
            target = self.directory / f"damaged-{stamp}-{n}.db"
            n += 1
        os.replace(self.path, target)
        for side in _sidecars(self.path):
            if side.exists():
                if side.name.endswith("-wal"):
                    os.replace(side, target.with_name(target.name + "-wal"))
                else:
                    side.unlink()
        log.warning("reply cache %s is damaged (%s); moved it to %s", self.path, reason, target)
        self.moved_aside.append(target)
        return target

    def _connect(self) -> sqlite3.Connection | None:
        """The open store (opened, checked and if need be rebuilt once per process)."""
        with self._lock:
            if self._off_reason is not None:
                return None
            if self._conn is not None and self._pid == os.getpid():
                return self._conn
            self._conn = None  # a connection inherited over fork is not used (nor closed)
            try:
                self.directory.mkdir(parents=True, exist_ok=True)
                with _flock(self.directory / _OPEN_LOCK):
                    reason = check_store_file(self.path) if self.path.exists() else None
                    if reason is not None:
                        self._move_aside(reason)
                    self._conn = _open_store(self.path)
            except (OSError, sqlite3.Error) as exc:
                self._off_reason = _describe(exc)
                log.warning("reply cache %s is off for this run: %s", self.path, self._off_reason)
                return None
            self._pid = os.getpid()
            if self.warn_legacy and (self.directory / LEGACY_NAME).exists():
                self.warn_legacy = False
                log.warning(
                    "%s is an old pickled diskcache; its replies are not read "
                    "(import them with `ragcourt cache migrate`)",
                    self.directory / LEGACY_NAME,
                )
            return self._conn

    def _db_error(self, exc: sqlite3.Error, doing: str) -> None:
        """A failed query: warn; reopen (re-check) on corruption; give up after a few."""
        self._db_errors += 1
        log.warning("reply cache %s: %s failed (%s)", self.path, doing, _describe(exc))
        with self._lock:
            if self._conn is not None and not isinstance(exc, sqlite3.OperationalError):
                self._conn.close()
                self._conn = None  # the next call re-checks the file and moves it aside if bad
            if self._db_errors >= _MAX_DB_ERRORS and self._off_reason is None:
                self._off_reason = f"{self._db_errors} failed queries"
                log.warning("reply cache %s is off for this run: too many errors", self.path)

    # ------------------------------------------------------------------ entries
    def get(self, key: str) -> dict[str, Any] | None:
        """The stored reply (every ``CachedReply`` field) or None; a damaged entry is a miss."""
        if not self.enabled:
            return None
        conn = self._connect()
        if conn is None:
            return None
        try:
            with self._lock:
                row = conn.execute("SELECT value FROM replies WHERE key = ?", (key,)).fetchone()
        except sqlite3.Error as exc:
            self._db_error(exc, "read")
            return None
        if row is None:
            return None
        reply = parse_entry(row[0])
        if isinstance(reply, str):
            self._drop_damaged(conn, key, row[0], reply)
            return None
        return reply.model_dump(mode="json")

    def _drop_damaged(self, conn: sqlite3.Connection, key: str, value: object, why: str) -> None:
        self.damaged_entries += 1
        level = logging.WARNING if self.damaged_entries == 1 else logging.DEBUG
        log.log(level, "reply cache %s: damaged entry %s dropped: %s", self.path, key, why)
        try:
            with self._lock:  # only if unchanged: a concurrent good write is kept
                conn.execute("DELETE FROM replies WHERE key = ? AND value IS ?", (key, value))
        except sqlite3.Error as exc:
            self._db_error(exc, "delete")

    def set(self, key: str, value: dict[str, Any]) -> None:
        """Store ``value`` (validated as a ``CachedReply``) as canonical JSON; upsert."""
        if not self.enabled:
            return
        try:
            reply = CachedReply.model_validate(value)
        except ValidationError as exc:
            log.warning("reply not cached (%s)", str(exc).splitlines()[0])
            return
        conn = self._connect()
        if conn is None:
            return
        try:
            with self._lock:
                conn.execute(
                    "INSERT INTO replies (key, value) VALUES (?, ?) "
                    "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    (key, canonical_json(reply.model_dump(mode="json"))),
                )
        except sqlite3.Error as exc:
            self._db_error(exc, "write")

    # ------------------------------------------------------------------ in-flight claim
    @asynccontextmanager
    async def claim(self, key: str) -> AsyncIterator[None]:
        """Hold ``inflight/<key>.lock`` for the block; waits (async) while another holds it.

        Best effort: no claim when the cache is off, the key is not a sha256 hex, the lock
        cannot be made, or ``claim_timeout_s`` passes (then the caller just goes ahead).
        """
        fd = None
        path = self.directory / _INFLIGHT_DIR / f"{key}.lock"
        if self.enabled and self._off_reason is None and _KEY.fullmatch(key):
            fd = await self._acquire(path)
        try:
            yield
        finally:
            if fd is not None:
                with contextlib.suppress(OSError):
                    path.unlink()  # before unlocking: a waiter on this inode sees it is stale
                os.close(fd)

    async def _acquire(self, path: Path) -> int | None:
        deadline = time.monotonic() + self.claim_timeout_s
        delay = 0.01
        while True:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
            except OSError as exc:
                log.warning("no in-flight claim on %s (%s)", path, _describe(exc))
                return None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                if time.monotonic() > deadline:
                    log.warning("in-flight claim %s still held; calling without it", path)
                    return None
                await asyncio.sleep(delay)
                delay = min(delay * 2, 0.25)
                continue
            try:
                same = os.stat(path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                return fd
            os.close(fd)  # the holder removed this lock file while we waited: take a fresh one

    # ------------------------------------------------------------------ maintenance
    def _size(self) -> int:
        return sum(p.stat().st_size for p in [self.path, *_sidecars(self.path)] if p.exists())

    def stats(self) -> dict[str, Any]:
        """Entry count and on-disk size (bytes) of the store; ``file_damage`` if it is bad.

        Reading stats never moves a damaged file (``verify --repair`` or any stage does).
        """
        out: dict[str, Any] = {
            "directory": str(self.directory),
            "entries": 0,
            "size_bytes": self._size(),
            "damaged_entries": self.damaged_entries,
            "file_damage": None,
            "legacy_diskcache": (self.directory / LEGACY_NAME).exists(),
        }
        if not self.path.exists():
            return out
        if self._conn is None:
            out["file_damage"] = check_store_file(self.path)
            if out["file_damage"] is not None:
                return out
        conn = self._connect()
        if conn is None:
            out["file_damage"] = self._off_reason
            return out
        try:
            with self._lock:
                (out["entries"],) = conn.execute("SELECT count(*) FROM replies").fetchone()
        except sqlite3.Error as exc:
            out["file_damage"] = _describe(exc)
        out["size_bytes"] = self._size()
        return out

    def clear(self) -> int:
        """Remove every entry (a damaged file is moved aside); returns how many were removed."""
        if not self.directory.is_dir():
            return 0
        conn = self._connect()
        if conn is None:
            return 0
        try:
            with self._lock:
                return int(conn.execute("DELETE FROM replies").rowcount)
        except sqlite3.Error as exc:
            self._db_error(exc, "clear")
            return 0

    def verify(self, repair: bool = False) -> VerifyReport:
        """Check the file and every entry; ``repair`` moves a bad file aside, drops bad entries."""
        report = VerifyReport(path=str(self.path))
        if not self.path.exists():
            return report
        if self._conn is None:
            report.file_damage = check_store_file(self.path)
            if report.file_damage is not None:
                if repair:
                    self.directory.mkdir(parents=True, exist_ok=True)
                    with _flock(self.directory / _OPEN_LOCK):
                        if check_store_file(self.path) is not None:
                            report.moved_to = str(self._move_aside(report.file_damage))
                return report
        conn = self._connect()
        if conn is None:
            report.file_damage = self._off_reason
            return report
        try:
            with self._lock:
                rows = conn.execute("SELECT key, value FROM replies").fetchall()
            damaged: list[tuple[object, object]] = []
            for key, value in rows:
                if not (isinstance(key, str) and _KEY.fullmatch(key)):
                    why: str | None = "key is not a sha256 hex"
                else:
                    parsed = parse_entry(value)
                    why = parsed if isinstance(parsed, str) else None
                if why is None:
                    report.entries_ok += 1
                    continue
                damaged.append((key, value))
                if len(report.examples) < 5:
                    report.examples.append(f"{str(key)[:64]}: {why}")
            report.entries_damaged = len(damaged)
            if repair:
                with self._lock:
                    for key, value in damaged:
                        cur = conn.execute(
                            "DELETE FROM replies WHERE key IS ? AND value IS ?", (key, value)
                        )
                        report.entries_removed += cur.rowcount
        except sqlite3.Error as exc:
            report.file_damage = _describe(exc)
        return report

    def close(self) -> None:
        with self._lock:
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None
        if self.damaged_entries > self._damage_reported:
            self._damage_reported = self.damaged_entries
            log.warning(
                "reply cache %s: %d damaged entries were dropped (misses)",
                self.path,
                self.damaged_entries,
            )
