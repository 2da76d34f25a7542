"""Per-stage, per-model call accounting, written as a DVC metrics JSON file.

One :class:`StageAccount` per stage name per process, shared by every Gateway built for
that stage, so several gateways in one stage add up instead of overwriting each other.
Token and cost figures count only real model calls (cache hits cost nothing).
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from stages.io import write_json


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
    ) -> None:
        """Account one request's outcome (``attempts`` real calls unless ``cached``)."""
        with self._lock:
            c = self.models.setdefault(model, ModelCounters())
            c.requests += 1
            if cached:
                c.cache_hits += 1
            else:
                c.model_calls += attempts
                c.retries += max(attempts - 1, 0)
                c.prompt_tokens += prompt_tokens
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


def stage_account(stage: str) -> StageAccount:
    """The process-wide account of ``stage`` (created on first use)."""
    with _ACCOUNTS_LOCK:
        if stage not in _ACCOUNTS:
            _ACCOUNTS[stage] = StageAccount(stage)
        return _ACCOUNTS[stage]


def reset_accounts() -> None:
    """Forget all accounts (tests)."""
    with _ACCOUNTS_LOCK:
        _ACCOUNTS.clear()
