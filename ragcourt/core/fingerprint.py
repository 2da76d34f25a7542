"""Content fingerprints: the one sha256 of files, folders and JSON-able objects.

``file_sha256(path)`` hashes a file's bytes once per (resolved path, size, mtime_ns) in this
process; with ``persist=True`` the digest is also remembered on disk
(``<ragcourt cache>/sha256.json``), so later processes do not re-hash 100 MB - 1 GB model
files. ``path_sha256`` extends it to folders (sorted (relative path, file sha256) pairs, hidden
files and atomic-write temp files skipped) and to missing paths (:data:`MISSING`).
``object_sha256`` hashes JSON with sorted keys. Thread-safe.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path
from typing import Any

MISSING = "missing"
_BLOCK = 1 << 20

_memo: dict[tuple[str, int, int], str] = {}
_memo_lock = threading.Lock()
_disk_lock = threading.Lock()


def cache_root() -> Path:
    """``$RAGCOURT_HOME`` or ``$XDG_CACHE_HOME/ragcourt`` (default ``~/.cache/ragcourt``)."""
    if os.environ.get("RAGCOURT_HOME"):
        return Path(os.environ["RAGCOURT_HOME"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ragcourt"


def _stat_key(path: Path) -> tuple[str, int, int]:
    st = path.stat()
    return (str(path.resolve()), st.st_size, st.st_mtime_ns)


def _disk_memo_path() -> Path:
    return cache_root() / "sha256.json"


def _read_disk_memo() -> dict[str, str]:
    try:
        data = json.loads(_disk_memo_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def _disk_key(key: tuple[str, int, int]) -> str:
    return f"{key[0]}|{key[1]}|{key[2]}"


def hash_file_bytes(path: Path) -> str:
    """sha256 of a file's bytes, read in 1 MiB blocks (no memo)."""
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(_BLOCK), b""):
            h.update(block)
    return h.hexdigest()


def file_sha256(path: Path, *, persist: bool = False) -> str:
    """sha256 of a file's bytes, memoised on (resolved path, size, mtime_ns); ``persist``
    also keeps it in ``<cache root>/sha256.json`` for later processes."""
    key = _stat_key(path)
    with _memo_lock:
        hit = _memo.get(key)
    if hit is not None:
        return hit
    if persist:
        with _disk_lock:
            stored = _read_disk_memo().get(_disk_key(key))
        if stored is not None:
            with _memo_lock:
                _memo[key] = stored
            return stored
    digest = hash_file_bytes(path)
    remember(path, digest, persist=persist)
    return digest


def remember(path: Path, digest: str, *, persist: bool = False) -> None:
    """Record ``digest`` as the sha256 of ``path`` as it is now (e.g. hashed while written)."""
    key = _stat_key(path)
    with _memo_lock:
        _memo[key] = digest
    if persist:
        from ragcourt.core.io import write_json

        with _disk_lock:
            memo = _read_disk_memo()
            memo[_disk_key(key)] = digest
            write_json(memo, _disk_memo_path(), durable=True)


def path_sha256(path: Path) -> str:
    """A file's sha256; a folder's = sha256 of its sorted (relative path, file sha256) pairs
    (hidden files and temp files of atomic writes excluded); :data:`MISSING` when absent."""
    if path.is_file():
        return file_sha256(path)
    if not path.is_dir():
        return MISSING
    h = hashlib.sha256()
    for f in sorted(p for p in path.rglob("*") if p.is_file()):
        rel = f.relative_to(path)
        if any(part.startswith(".") for part in rel.parts):
            continue
        h.update(f"{rel.as_posix()}\0{file_sha256(f)}\n".encode())
    return h.hexdigest()


def object_sha256(obj: Any) -> str:
    """sha256 of ``obj`` as JSON with sorted keys (``str()`` for non-JSON values)."""
    text = json.dumps(obj, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
