"""Prompt templates live in ``configs/prompts/<area>.yaml`` as ``{version: {name: text}}``.

Templates use ``str.format`` fields. The version string is stored with every generated row
so a prompt change is visible in the artifacts (and changes the LLM cache key).
A version with ``untrusted: fenced`` puts every untrusted field (question, references,
answer, passage, context: the ``data`` of :func:`render`) inside a
:func:`~ragcourt.core.fencing.fence`; older versions insert it raw (kept to measure them).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from pathlib import Path

import yaml

from ragcourt.core import catalog
from ragcourt.core.errors import ConfigError
from ragcourt.core.fencing import fence

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


def has_prompt(area: str, name: str, version: str, prompts_dir: Path | None = None) -> bool:
    """True when ``version`` of ``<area>.yaml`` defines template ``name``."""
    try:
        prompt(area, name, version, prompts_dir)
    except ConfigError:
        return False
    return True


FENCE_KEY = "untrusted"  # `untrusted: fenced` in a version: its data fields are fenced


def is_fenced(area: str, version: str, prompts_dir: Path | None = None) -> bool:
    """True when ``version`` of ``<area>.yaml`` declares ``untrusted: fenced``."""
    return has_prompt(area, FENCE_KEY, version, prompts_dir) and (
        prompt(area, FENCE_KEY, version, prompts_dir) == "fenced"
    )


def render(
    area: str,
    name: str,
    version: str,
    data: Mapping[str, str] | None = None,
    plain: Mapping[str, str] | None = None,
    prompts_dir: Path | None = None,
) -> str:
    """Template ``name`` filled with ``plain`` fields as given and ``data`` fields (untrusted
    text) as ``fence(text, FIELD)`` when the version is fenced, else raw."""
    fenced = is_fenced(area, version, prompts_dir)
    fields = dict(plain or {})
    for key, text in (data or {}).items():
        fields[key] = fence(text, key.upper().replace("_", " ")) if fenced else text
    return prompt(area, name, version, prompts_dir).format(**fields)
