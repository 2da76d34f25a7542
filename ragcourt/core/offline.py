"""Offline and reproducibility hygiene: provider/telemetry/BLAS environment defaults, applied
explicitly.

:func:`apply` is called by every entry point (stage entries via ``run_entry``, the CLI
callback, the Prefect flow) before heavy imports, so litellm, transformers and prefect never
try the network for cost maps, hub files or analytics. ``setdefault`` keeps user overrides.
Importing this module changes nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

_DEFAULTS = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "DO_NOT_TRACK": "1",
    "DVC_NO_ANALYTICS": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "LITELLM_LOG": "ERROR",
    # Prefect's temporary server (no PREFECT_API_URL) gets 120 s instead of 20 s to start
    # (not enough on two busy cores); ragcourt log records reach the task logs in the UI;
    # stages run bare (under DVC) too, without a flow run to log to.
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120",
    "PREFECT_LOGGING_EXTRA_LOGGERS": "ragcourt",
    "PREFECT_LOGGING_TO_API_WHEN_MISSING_FLOW": "ignore",
    # MKL's strict conditional numerical reproducibility: torch's matrix products (the
    # embedders') give the same bits whatever the thread count, so a one-thread Dask worker and
    # a two-thread process write the same vectors (read when MKL first runs; no speed cost
    # measured: benchmarks/results in docs/guide/scale-out.md).
    "MKL_CBWR": "AUTO,STRICT",
}


def apply() -> None:
    """Set the offline defaults (idempotent)."""
    for key, value in _DEFAULTS.items():
        os.environ.setdefault(key, value)
    if "TIKTOKEN_CACHE_DIR" not in os.environ:
        cache = _litellm_tiktoken_dir()
        if cache is not None:
            os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)


def _litellm_tiktoken_dir() -> Path | None:
    """litellm ships tiktoken's BPE files; find them without importing litellm."""
    import importlib.util

    spec = importlib.util.find_spec("litellm")
    if spec is None or spec.origin is None:
        return None
    cand = Path(spec.origin).parent / "litellm_core_utils" / "tokenizers"
    return cand if cand.is_dir() else None
