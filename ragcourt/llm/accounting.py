"""Per-stage, per-model call accounting, written as a DVC metrics JSON file.

One :class:`StageAccount` per stage name, shared by every Gateway built for that stage, so
several gateways in one stage add up instead of overwriting each other. Token and cost figures
count only real model calls (cache hits cost nothing).

Where the accounts live: by default one per stage name per process (``python -m stages.<x>``
is one process per stage, so its file counts exactly that run). Inside
``with fresh_accounts():`` every account starts at zero and is private to the block's context
(a Prefect task: concurrent tasks in threads or a long-lived Dask worker neither share nor
pile up counts). A stage computed in partitions (one task per system) saves each partition's
``as_dict()`` and writes ``merge_account_dicts`` of them: counters and wall time are sums.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from ragcourt.core.io import write_json


@dataclass
class ModelCounters:
    """Counters for one model. ``requests`` = model_calls-or-cache-hits per request."""

    requests: int = 0
    cache_hits: int = 0
    model_calls: int = 0  # litellm calls, retries included
    retries: int = 0
    errors: int = 0  # requests that still failed after retries
    parse_failures: int = 0  # structured requests whose reply never parsed
    prompt_tokens: int = 0
    prefix_hit_tokens: int = 0  # prompt tokens whose KV state a local model reused
    evaluated_tokens: int = 0  # prompt tokens actually evaluated: prompt - prefix hit
    completion_tokens: int = 0
    model_time_s: float = 0.0  # summed latency of real model calls
    cost_usd: float = 0.0

    def add(self, other: ModelCounters) -> None:
        for name, value in asdict(other).items():
            setattr(self, name, getattr(self, name) + value)


@dataclass
class StageAccount:
    """Thread-safe counters of one stage: per model, plus batch wall time."""

    stage: str
    models: dict[str, ModelCounters] = field(default_factory=dict)
    wall_time_s: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def record(
        self,
        model: str,
        *,
        cached: bool,
        ok: bool,
        attempts: int = 1,
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
        latency_s: float = 0.0,
        cost_usd: float = 0.0,
        prefix_hit_tokens: int = 0,
    ) -> None:
        """Account one request's outcome (``attempts`` real calls unless ``cached``);
        evaluated tokens = ``prompt_tokens - prefix_hit_tokens``."""
        with self._lock:
            c = self.models.setdefault(model, ModelCounters())
            c.requests += 1
            if cached:
                c.cache_hits += 1
            else:
                c.model_calls += attempts
                c.retries += max(attempts - 1, 0)
                c.prompt_tokens += prompt_tokens
                c.prefix_hit_tokens += prefix_hit_tokens
                c.evaluated_tokens += prompt_tokens - prefix_hit_tokens
                c.completion_tokens += completion_tokens
                c.model_time_s += latency_s
                c.cost_usd += cost_usd
            if not ok:
                c.errors += 1

    def record_parse_failure(self, model: str) -> None:
        with self._lock:
            self.models.setdefault(model, ModelCounters()).parse_failures += 1

    def add_wall_time(self, seconds: float) -> None:
        with self._lock:
            self.wall_time_s += seconds

    def as_dict(self) -> dict[str, Any]:
        """``{stage, wall_time_s, total: {...}, models: {model: {...}}}`` (rounded)."""
        with self._lock:
            total = ModelCounters()
            for c in self.models.values():
                total.add(c)
            return {
                "stage": self.stage,
                "wall_time_s": round(self.wall_time_s, 3),
                "total": _rounded(total),
                "models": {m: _rounded(c) for m, c in sorted(self.models.items())},
            }

    def write(self, path: Path | str) -> Path:
        return write_json(self.as_dict(), path)


def _rounded(c: ModelCounters) -> dict[str, Any]:
    d = asdict(c)
    d["model_time_s"] = round(d["model_time_s"], 3)
    d["cost_usd"] = round(d["cost_usd"], 6)
    return d


_ACCOUNTS: dict[str, StageAccount] = {}
_ACCOUNTS_LOCK = threading.Lock()
_SCOPE: ContextVar[dict[str, StageAccount] | None] = ContextVar(
    "ragcourt_llm_accounts", default=None
)


def stage_account(stage: str) -> StageAccount:
    """The account of ``stage`` in the current :func:`fresh_accounts` block, else the
    process-wide one (created on first use)."""
    scoped = _SCOPE.get()
    with _ACCOUNTS_LOCK:
        accounts = _ACCOUNTS if scoped is None else scoped
        if stage not in accounts:
            accounts[stage] = StageAccount(stage)
        return accounts[stage]


@contextmanager
def fresh_accounts() -> Iterator[dict[str, StageAccount]]:
    """Accounts private to this block (and the context it runs in), all starting at zero;
    yields them by stage name. Gateways built inside keep their account after the block."""
    scoped: dict[str, StageAccount] = {}
    token = _SCOPE.set(scoped)
    try:
        yield scoped
    finally:
        _SCOPE.reset(token)


def reset_accounts() -> None:
    """Forget all process-wide accounts (tests; a stage run in a long-lived process)."""
    with _ACCOUNTS_LOCK:
        _ACCOUNTS.clear()


_COUNTERS = tuple(f.name for f in fields(ModelCounters))


def merge_account_dicts(stage: str, parts: Iterable[dict[str, Any]]) -> StageAccount:
    """One account summing ``parts`` (``StageAccount.as_dict()`` outputs, e.g. one per
    partition): per model, every counter and ``wall_time_s`` is the sum over the parts."""
    out = StageAccount(stage)
    for part in parts:
        out.wall_time_s += float(part.get("wall_time_s", 0.0))
        for model, counters in (part.get("models") or {}).items():
            c = ModelCounters(**{k: counters[k] for k in _COUNTERS if k in counters})
            out.models.setdefault(model, ModelCounters()).add(c)
    return out
