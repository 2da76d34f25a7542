"""Offline hygiene: set provider/telemetry environment defaults before heavy imports.

Imported first by ``stages/__init__.py`` so litellm, transformers and prefect never try
the network for cost maps, hub files or analytics. ``setdefault`` keeps user overrides.
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


apply()
