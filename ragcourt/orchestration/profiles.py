"""Params profiles: named partial params mappings deep-merged over ``params.yaml``.

A profile is ``configs/profiles/<name>.yaml``, a mapping whose every key path is a params key
(a field of :class:`ragcourt.orchestration.params.Params`, or an entry of a user-keyed
mapping such as ``judge.judges``). ``merged = deep_merge(params, overlay)``: mappings merge key
by key, any other value (scalars, lists, null) replaces. ``apply_profile`` writes the merged
values into ``params.yaml`` itself (comments kept), so DVC tracks them and a later
``dvc repro`` needs no profile. A profile is *active* when applying it would change no
validated params value.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ragcourt.core.catalog import DEFAULT_PARAMS_FILE, DEFAULT_PROFILES_DIR
from ragcourt.core.errors import ConfigError, ParamsError
from ragcourt.core.io import write_text
from ragcourt.core.user_yaml import read_user_yaml
from ragcourt.orchestration.params import Params, parse_params


def profile_names(root: Path = Path(".")) -> list[str]:
    """Names of the profiles under ``<root>/configs/profiles`` (sorted)."""
    folder = root / DEFAULT_PROFILES_DIR
    return sorted(p.stem for p in folder.glob("*.yaml")) if folder.is_dir() else []


def profile_path(name: str, root: Path = Path(".")) -> Path:
    """The overlay file of profile ``name``; ConfigError naming the known ones otherwise."""
    path = root / DEFAULT_PROFILES_DIR / f"{name}.yaml"
    if "/" in name or "\\" in name or name.startswith(".") or not path.is_file():
        known = ", ".join(profile_names(root)) or "none"
        raise ConfigError(f"{path}: unknown profile '{name}' (known: {known})")
    return path


def _target(annotation: Any) -> tuple[str, Any] | None:
    """What a key path may descend into under a field: ("model", cls) for a params model,
    ("dict", value_annotation) for a user-keyed mapping, None for a leaf."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return ("model", annotation)
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _target(typing.get_args(annotation)[0])
    if origin in (dict, Mapping):
        return ("dict", typing.get_args(annotation)[1])
    if origin in (typing.Union, types.UnionType):
        for arg in typing.get_args(annotation):
            found = _target(arg)
            if found is not None:
                return found
    return None


def check_overlay_keys(
    overlay: Mapping[str, Any], source: Path | str, model: type[BaseModel] = Params
) -> None:
    """ConfigError ``<source>: key '<dotted>' is not a params key`` for the first key path
    that names no field (keys under a user-keyed mapping such as ``judge.judges`` are free)."""

    def walk(node: Mapping[str, Any], target: tuple[str, Any] | None, prefix: str) -> None:
        for key, value in node.items():
            dotted = f"{prefix}{key}"
            if target is None:
                raise ConfigError(f"{source}: key '{dotted}' is not a params key")
            kind, what = target
            if kind == "model":
                field = what.model_fields.get(key)
                if field is None:
                    raise ConfigError(f"{source}: key '{dotted}' is not a params key")
                sub = _target(field.annotation)
            else:
                sub = _target(what)
            if isinstance(value, Mapping):
                walk(value, sub if sub is not None else None, f"{dotted}.")

    walk(overlay, ("model", model), "")


def load_overlay(name: str, root: Path = Path(".")) -> dict[str, Any]:
    """The validated overlay mapping of profile ``name`` (keys checked, not values)."""
    path = profile_path(name, root)
    data = read_user_yaml(path, ConfigError)
    if not isinstance(data, dict) or not data:
        raise ConfigError(f"{path}: a profile must be a non-empty mapping of params keys")
    check_overlay_keys(data, path)
    return data


def deep_merge(base: Mapping[str, Any], overlay: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with ``overlay`` merged in: mappings recursively, other values replace."""
    out = dict(base)
    for key, value in overlay.items():
        old = out.get(key)
        if isinstance(value, Mapping) and isinstance(old, Mapping):
            out[key] = deep_merge(old, value)
        else:
            out[key] = value
    return out


def _read_params_data(params_path: Path) -> dict[str, Any]:
    if not params_path.is_file():
        raise ParamsError(f"{params_path}: params file not found")
    data = read_user_yaml(params_path, ParamsError, empty={})
    if not isinstance(data, dict):
        raise ParamsError(f"{params_path}: top level must be a mapping")
    return data


def merged_params(name: str, params_path: Path, root: Path = Path(".")) -> Params:
    """params.yaml with profile ``name`` merged over it, validated (one-line ParamsError
    naming ``<params> + <profile>`` and the key)."""
    overlay = load_overlay(name, root)
    data = deep_merge(_read_params_data(params_path), overlay)
    return parse_params(data, f"{params_path} + {profile_path(name, root)}")


def is_active(name: str, params_path: Path, root: Path = Path(".")) -> bool:
    """True iff merging profile ``name`` over params changes no validated value."""
    current = parse_params(_read_params_data(params_path), params_path)
    return merged_params(name, params_path, root) == current


def active_profiles(params_path: Path, root: Path = Path(".")) -> list[str]:
    """Every profile whose overlay params already satisfy."""
    return [n for n in profile_names(root) if is_active(n, params_path, root)]


def _set_in(node: Any, overlay: Mapping[str, Any], prefix: str, changed: list[str]) -> None:
    from ruamel.yaml.comments import CommentedMap

    for key, value in overlay.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping):
            if not isinstance(node.get(key), Mapping):
                node[key] = CommentedMap()
            _set_in(node[key], value, f"{dotted}.", changed)
        elif key not in node or node[key] != value:
            node[key] = value
            changed.append(dotted)


def apply_profile(
    name: str, params_path: Path = Path(DEFAULT_PARAMS_FILE), root: Path = Path(".")
) -> list[str]:
    """Write profile ``name``'s values into ``params_path`` (comments and order kept; the
    merged params are validated first, so a bad profile leaves the file untouched).
    Returns the dotted keys whose value changed."""
    import io

    from ruamel.yaml import YAML

    overlay = load_overlay(name, root)
    merged_params(name, params_path, root)  # validate before writing anything
    rt = YAML()
    rt.preserve_quotes = True
    rt.width = 4096  # never re-wrap a flow mapping
    rt.representer.add_representer(
        type(None), lambda r, _: r.represent_scalar("tag:yaml.org,2002:null", "null")
    )
    doc = rt.load(params_path.read_text(encoding="utf-8"))
    changed: list[str] = []
    _set_in(doc, overlay, "", changed)
    if changed:
        buf = io.StringIO()
        rt.dump(doc, buf)
        write_text(buf.getvalue(), params_path)
    return changed
