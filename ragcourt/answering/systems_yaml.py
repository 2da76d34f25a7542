"""The systems file as YAML: duplicate mapping keys are errors (plain YAML silently keeps the
last), anchors / aliases and deep nesting are refused (:mod:`ragcourt.core.user_yaml`), and
every YAML problem is one ConfigError line naming the file and line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from ragcourt.core.errors import ConfigError
from ragcourt.core.user_yaml import UserYamlLoader, load_user_yaml


class _UniqueKeyLoader(UserYamlLoader):
    """UserYamlLoader that refuses duplicate mapping keys (plain YAML silently keeps the last)."""


def _construct_unique_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node)
        if key in seen:
            raise ConfigError(f"line {key_node.start_mark.line + 1}: duplicate key '{key}'")
        seen.add(key)
    return dict(loader.construct_mapping(node))


_UniqueKeyLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
    _construct_unique_mapping,
)


def load_yaml_text(text: str, path: Path) -> Any:
    """YAML text of the systems file ``path``, duplicate keys, anchors and aliases rejected
    (one-line ConfigError)."""
    try:
        return load_user_yaml(text, path, ConfigError, _UniqueKeyLoader)
    except ConfigError as err:
        msg = str(err)
        raise ConfigError(msg if msg.startswith(f"{path}:") else f"{path}: {msg}") from None


def read_systems_yaml(path: Path) -> Any:
    """The parsed systems file ``path`` (one-line ConfigError when missing or invalid)."""
    if not path.is_file():
        raise ConfigError(f"{path}: systems file not found (params key 'systems_file')")
    return load_yaml_text(path.read_text(encoding="utf-8"), path)
