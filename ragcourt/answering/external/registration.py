"""Registering an imported answers file as a system (``ragcourt answers import``).

The file is copied (atomically) to ``<data>/external/<system><suffix>`` and an entry
``{name: <system>, kind: answers_file, path: <that path>}`` is appended to the systems file,
after the last item of its top-level ``systems`` list, as one flow-style line; comments and
layout of the rest of the file are kept byte for byte. The edited text is validated with
:func:`~ragcourt.answering.systems.parse_systems` before it replaces the file. Where the file
cannot be edited that way (a flow-style or empty ``systems`` list, a top level that is not a
block mapping) a ConfigError says so and shows the line to add by hand.

Re-importing under a name already registered with the same path only refreshes the copy; a
name taken by any other system is an error.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ragcourt.answering.external.specs import ANSWERS_FILE_SUFFIXES
from ragcourt.answering.names import check_system_name
from ragcourt.answering.params import AnsweringView
from ragcourt.answering.systems import load_yaml_text, parse_systems
from ragcourt.core import catalog
from ragcourt.core.errors import ConfigError
from ragcourt.core.io import write_text, write_with
from ragcourt.core.user_yaml import UserYamlLoader


def external_answers_dir() -> Path:
    """``data/external``: where imported answers files live."""
    return Path(catalog.DEFAULT_EXTERNAL_DIR)


def imported_path(system: str, source: Path) -> Path:
    """Where the answers file ``source`` of ``system`` is kept (name checked first)."""
    try:
        check_system_name(system)
    except ValueError as err:
        raise ConfigError(str(err)) from None
    suffix = source.suffix.lower()
    if suffix not in ANSWERS_FILE_SUFFIXES:
        raise ConfigError(f"{source}: answers file must end in {', '.join(ANSWERS_FILE_SUFFIXES)}")
    return external_answers_dir() / f"{system}{suffix}"


def entry_line(system: str, path: Path) -> str:
    """The systems-file item for an imported answers file, as one flow-style YAML line."""
    entry = {"name": system, "kind": "answers_file", "path": path.as_posix()}
    return yaml.safe_dump(entry, default_flow_style=True, sort_keys=False, width=1 << 16).strip()


@dataclass(frozen=True)
class Registration:
    """``state``: ``added`` (entry appended), ``present`` (already registered with this path)
    or ``printed`` (not edited on request: ``entry`` is the line to add)."""

    state: str
    systems_file: Path
    entry: str


def _existing(data: Any, system: str) -> dict[str, Any] | None:
    if not isinstance(data, dict):
        return None
    for item in data.get("systems") or []:
        if isinstance(item, dict) and item.get("name") == system:
            return item
    return None


def _belongs_below(line: str, dash: int) -> bool:
    """A blank line, or a comment indented less than the list items (it introduces what
    follows the list)."""
    stripped = line.lstrip()
    return not stripped or (stripped.startswith("#") and len(line) - len(stripped) < dash)


def appended_text(text: str, line: str) -> str | None:
    """``text`` with ``- <line>`` after the last item of the top-level ``systems`` block list
    (or a new ``systems:`` key at the end when there is none); None when that is not safe."""
    root = yaml.compose(text, Loader=UserYamlLoader)
    seq = None
    if root is not None:
        if not isinstance(root, yaml.MappingNode) or root.flow_style:
            return None
        seq = next((v for k, v in root.value if getattr(k, "value", None) == "systems"), None)
    if seq is None:
        sep = "" if not text or text.endswith("\n") else "\n"
        return f"{text}{sep}systems:\n  - {line}\n"
    if not isinstance(seq, yaml.SequenceNode) or seq.flow_style or not seq.value:
        return None
    lines = text.splitlines(keepends=True)
    first = seq.value[0].start_mark
    dash = lines[first.line].rfind("-", 0, first.column)
    if dash < 0:
        return None
    end = seq.value[-1].end_mark
    at = end.line if end.column == 0 else end.line + 1
    # leave comments / blank lines that precede the next top-level key where they are
    last_start = seq.value[-1].start_mark.line
    while at - 1 > last_start and _belongs_below(lines[at - 1], dash):
        at -= 1
    if at > 0 and not lines[at - 1].endswith("\n"):
        lines[at - 1] += "\n"
    lines.insert(at, f"{' ' * dash}- {line}\n")
    return "".join(lines)


def register_answers_file(
    source: Path, system: str, params: AnsweringView, *, edit_systems_file: bool = True
) -> Registration:
    """Copy ``source`` into the project and add its system entry (rules in the module
    docstring). The caller has already checked the file against the QA set."""
    dest = imported_path(system, source)
    systems_file = Path(params.systems_file)
    line = entry_line(system, dest)
    text = systems_file.read_text(encoding="utf-8") if systems_file.is_file() else ""
    current = load_yaml_text(text, systems_file) if text.strip() else None
    found = _existing(current, system)
    if found is not None and (
        found.get("kind") != "answers_file" or Path(str(found.get("path"))) != dest
    ):
        raise ConfigError(
            f"{systems_file}: system '{system}' already exists; choose another --system name"
        )
    new_text = None
    if found is None and edit_systems_file:
        new_text = appended_text(text, line)
        if new_text is None:
            raise ConfigError(
                f"{systems_file}: cannot append to its 'systems' list safely (flow style or "
                f"empty); add this item by hand: - {line}"
            )
        parse_systems(load_yaml_text(new_text, systems_file), params, systems_file)
    if source.resolve() != dest.resolve():

        def copy(tmp: Path) -> None:
            shutil.copyfile(source, tmp)

        write_with(dest, copy)
    if new_text is not None:
        write_text(new_text, systems_file)
        return Registration("added", systems_file, line)
    return Registration("present" if found is not None else "printed", systems_file, line)
