"""Prompt templates live in ``configs/prompts/<area>.yaml`` as ``{version: {name: text}}``.

Templates use ``str.format`` fields. The version string is stored with every generated row
so a prompt change is visible in the artifacts (and changes the LLM cache key).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import yaml

from ragcourt.core import catalog
from ragcourt.core.errors import ConfigError

PROMPTS_DIR = Path(catalog.PROMPTS_DIR)


@cache
def _load(path: str) -> dict[str, dict[str, str]]:
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"{p}: prompt file not found")
    data = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
    if not isinstance(data, dict):
        raise ConfigError(f"{p}: expected a mapping of version -> templates")
    return data


def prompt(area: str, name: str, version: str = "v1", prompts_dir: Path | None = None) -> str:
    """The template ``name`` of ``version`` in ``configs/prompts/<area>.yaml``."""
    path = (prompts_dir or PROMPTS_DIR) / f"{area}.yaml"
    data = _load(str(path.resolve()))
    try:
        return data[version][name]
    except KeyError:
        raise ConfigError(f"{path}: no prompt '{name}' in version '{version}'") from None
