"""Per-stage, per-model call accounting, written as a DVC metrics JSON file.

One :class:`StageAccount` per stage name, shared by every Gateway built for that stage, so
several gateways in one stage add up instead of overwriting each other. Token and cost figures
count only real model calls (cache hits cost nothing).

Where the accounts live: by default one per stage name per process (``python -m stages
<x>`` is one process per stage, so its file counts exactly that run). Inside
``with fresh_accounts():`` every account starts at zero and is private to the block's context
(a Prefect task: concurrent tasks in threads or a long-lived Dask worker neither share nor
pile up counts). A stage computed in partitions (one task per system) saves each partition's
``as_dict()`` and writes ``merge_account_dicts`` of them: counters and wall time are sums.

Two processes running the same stage at once must not overwrite each other's
counts: :meth:`StageAccount.write` holds ``flock`` on the metrics folder, and when the file
there was written by a run whose window overlaps this one's (its ``window.finished_utc`` is
not before this account's start) the two are merged (sums, ``processes`` counts the runs,
the window is their union); a file from an earlier, finished run is replaced.
"""

from __future__ import annotations

import fcntl
import json
import os
import threading
import uuid
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ragcourt.core.io import write_json
from ragcourt.core.scoped import scoped


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
    started: datetime = field(default_factory=lambda: datetime.now(UTC))
    processes: int = 1  # runs merged into this account (concurrent processes of one stage)
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
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
        """Write the metrics file under ``flock`` on its folder, merged with the file already
        there when that run overlapped this one in time (see the module docstring)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        finished = datetime.now(UTC)
        with _folder_lock(path.parent):
            mine = {**self.as_dict(), "processes": self.processes}
            mine["window"] = {
                "started_utc": _iso(self.started),
                "finished_utc": _iso(finished),
                "runs": self.run_id,
            }
            other = _overlapping_run(path, self.stage, self.started, self.run_id)
            if other is not None:
                merged = merge_account_dicts(self.stage, [other, mine])
                merged.processes = int(other.get("processes", 1)) + self.processes
                win = other["window"]
                out = {**merged.as_dict(), "processes": merged.processes}
                out["window"] = {
                    "started_utc": min(win["started_utc"], mine["window"]["started_utc"]),
                    "finished_utc": max(win["finished_utc"], mine["window"]["finished_utc"]),
                    "runs": f"{win.get('runs', '?')},{self.run_id}",
                }
                mine = out
            return write_json(mine, path)


def _iso(t: datetime) -> str:
    return t.isoformat(timespec="microseconds")


@contextmanager
def _folder_lock(folder: Path) -> Iterator[None]:
    """``flock`` on the folder itself (no lock file is left beside the metrics)."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def _overlapping_run(
    path: Path, stage: str, started: datetime, run_id: str
) -> dict[str, Any] | None:
    """The metrics dict at ``path`` when it is this stage's, written by another run (not
    ``run_id``, whose counts this account already holds) that finished at or after ``started``
    (the runs overlapped); None for no file, another stage, our own or an older run, or a file
    that does not parse (it is then replaced)."""
    try:
        other = json.loads(path.read_text(encoding="utf-8"))
        if other.get("stage") != stage:
            return None
        window = other["window"]
        finished = datetime.fromisoformat(window["finished_utc"])
        runs = str(window.get("runs", "")).split(",")
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return other if finished >= started and run_id not in runs else None


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


def fresh_accounts() -> AbstractContextManager[dict[str, StageAccount]]:
    """Accounts private to this block (and the context it runs in), all starting at zero;
    yields them by stage name. Gateways built inside keep their account after the block."""
    return scoped(_SCOPE, {})


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
