"""Prompt templates live in ``configs/prompts/<area>.yaml`` as ``{version: {name: text}}``.

Templates use ``str.format`` fields. The version string is stored with every generated row
so a prompt change is visible in the artifacts (and changes the LLM cache key).
A version with ``untrusted: fenced`` puts every untrusted field (question, references,
answer, passage, context: the ``data`` of :func:`render`) inside a
:func:`~ragcourt.core.fencing.fence`, ``untrusted: tagged`` inside an XML-style
:func:`~ragcourt.core.fencing.tag` named after the field; older versions insert it raw (kept
to measure them).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from pathlib import Path

from ragcourt.core import catalog
from ragcourt.core.errors import ConfigError
from ragcourt.core.fencing import fence, tag
from ragcourt.core.user_yaml import AnchoredYamlLoader, read_user_yaml

PROMPTS_DIR = Path(catalog.PROMPTS_DIR)


@cache
def _load(path: str) -> dict[str, dict[str, str]]:
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"{p}: prompt file not found")
    data = read_user_yaml(p, ConfigError, empty={}, loader=AnchoredYamlLoader)
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


FENCE_KEY = "untrusted"  # `untrusted: fenced|tagged` in a version: its data fields are enclosed
FENCE_STYLES = ("fenced", "tagged")


def fence_style(area: str, version: str, prompts_dir: Path | None = None) -> str | None:
    """``"fenced"`` or ``"tagged"`` as ``version`` of ``<area>.yaml`` declares under
    ``untrusted``, ``None`` when it declares nothing (raw fields); another value is an error."""
    if not has_prompt(area, FENCE_KEY, version, prompts_dir):
        return None
    style = prompt(area, FENCE_KEY, version, prompts_dir)
    if style not in FENCE_STYLES:
        path = (prompts_dir or PROMPTS_DIR) / f"{area}.yaml"
        raise ConfigError(
            f"{path}: {version}.{FENCE_KEY} is {style!r}, expected one of {FENCE_STYLES}"
        )
    return style


def is_fenced(area: str, version: str, prompts_dir: Path | None = None) -> bool:
    """True when ``version`` of ``<area>.yaml`` encloses its untrusted fields (either style)."""
    return fence_style(area, version, prompts_dir) is not None


def render(
    area: str,
    name: str,
    version: str,
    data: Mapping[str, str] | None = None,
    plain: Mapping[str, str] | None = None,
    prompts_dir: Path | None = None,
) -> str:
    """Template ``name`` filled with ``plain`` fields as given and ``data`` fields (untrusted
    text) as ``fence(text, FIELD)`` (``untrusted: fenced``), ``tag(text, field)``
    (``untrusted: tagged``), else raw."""
    style = fence_style(area, version, prompts_dir)
    fields = dict(plain or {})
    for key, text in (data or {}).items():
        if style == "fenced":
            fields[key] = fence(text, key.upper().replace("_", " "))
        elif style == "tagged":
            fields[key] = tag(text, key.lower())
        else:
            fields[key] = text
    return prompt(area, name, version, prompts_dir).format(**fields)
