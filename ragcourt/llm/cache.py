"""Disk cache of model replies (diskcache), keyed on everything that determines a reply.

key = sha256 of canonical JSON of (model, messages, temperature, max_tokens, seed, stop,
top_logprobs, response_format, candidate labels, cache format version). Only the request
content and the normalised reply (text, usage, logprobs) are stored: no headers, no API keys.
Failed calls are never cached, so a re-run retries them.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import diskcache

from ragcourt.llm.types import ChatRequest

CACHE_FORMAT = 1  # bump when the stored value layout changes


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


class ReplyCache:
    """A diskcache folder of ``key -> reply dict``; a disabled cache stores nothing."""

    def __init__(self, directory: Path | str, enabled: bool = True) -> None:
        self.directory = Path(directory)
        self.enabled = enabled
        self._cache: diskcache.Cache | None = None

    def _open(self) -> diskcache.Cache:
        if self._cache is None:
            self.directory.mkdir(parents=True, exist_ok=True)
            # size_limit 0 would evict everything; keep up to 16 GiB of replies
            self._cache = diskcache.Cache(str(self.directory), size_limit=16 * 2**30)
        return self._cache

    def get(self, key: str) -> dict[str, Any] | None:
        if not self.enabled:
            return None
        value = self._open().get(key)
        return value if isinstance(value, dict) else None

    def set(self, key: str, value: dict[str, Any]) -> None:
        if self.enabled:
            self._open().set(key, value)

    def stats(self) -> dict[str, Any]:
        """Entry count and on-disk size (bytes) of the cache folder."""
        if not self.directory.is_dir():
            return {"directory": str(self.directory), "entries": 0, "size_bytes": 0}
        cache = self._open()
        return {
            "directory": str(self.directory),
            "entries": len(cache),
            "size_bytes": int(cache.volume()),
        }

    def clear(self) -> int:
        """Remove every entry; returns how many were removed."""
        if not self.directory.is_dir():
            return 0
        return int(self._open().clear())

    def close(self) -> None:
        if self._cache is not None:
            self._cache.close()
            self._cache = None
