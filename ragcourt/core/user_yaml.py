"""YAML that people write (params.yaml, configs/*.yaml, profiles), read without surprises.

:class:`UserYamlLoader` is PyYAML's safe loader minus the two features that let a small file
expand without bound: anchors / aliases (``&a`` / ``*a``, and ``<<: *a`` merge keys, which
need one) are refused, so a "billion laughs" file of a few hundred bytes cannot become
gigabytes in whatever walks the loaded value (validation, hashing, ``systems list``); and
nesting deeper than :data:`MAX_YAML_DEPTH` is refused before it can overflow the stack.
:class:`AnchoredYamlLoader` (the prompt files, whose versions inherit with ``<<: *v1``) allows
anchors but bounds what they expand to (:data:`MAX_YAML_NODES` values counted with each use).
:func:`load_user_yaml` turns every problem into one line naming the file and line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from yaml.composer import ComposerError

from ragcourt.core.errors import ConfigError, RagcourtError, one_line

MAX_YAML_DEPTH = 100
"""Deepest nesting of mappings / sequences a user YAML file may have (real configs: < 10)."""
MAX_YAML_NODES = 200_000
"""Most values (scalars, lists, mappings) a YAML file may expand to, aliases counted each time
they are used (the prompt files, which may use anchors, hold a few thousand)."""


def _refused(problem: str, event: yaml.Event) -> ComposerError:
    return ComposerError(None, None, problem, event.start_mark)  # type: ignore[arg-type]


class UserYamlLoader(yaml.SafeLoader):
    """SafeLoader that refuses anchors and aliases, nesting deeper than MAX_YAML_DEPTH and a
    document of more than MAX_YAML_NODES values."""

    allow_aliases = False

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._sizes: dict[int, tuple[int, int]] = {}  # id(node) -> (values, depth) expanded

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        """Compose one node, refusing an alias or anchor (unless allowed), one level too many
        or an expansion past MAX_YAML_NODES."""
        event: yaml.Event = self.peek_event()  # type: ignore[no-untyped-call]
        if not self.allow_aliases:
            if isinstance(event, yaml.AliasEvent):
                raise _refused(
                    f"alias '*{event.anchor}' refused: anchors and aliases are not allowed "
                    "(write the value out; aliases can expand a small file into gigabytes)",
                    event,
                )
            anchor = getattr(event, "anchor", None)
            if anchor is not None:
                raise _refused(
                    f"anchor '&{anchor}' refused: anchors and aliases are not allowed "
                    "(write the value out)",
                    event,
                )
        self._depth += 1
        try:
            if self._depth > MAX_YAML_DEPTH:
                raise _refused(f"nested deeper than {MAX_YAML_DEPTH} levels", event)
            node: yaml.Node | None = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        if node is not None:
            self._measure(node, event)
        return node

    def _measure(self, node: yaml.Node, event: yaml.Event) -> None:
        """Record the expanded size and depth of ``node`` (its children are measured)."""
        if id(node) in self._sizes:  # an alias: the anchored node, measured already
            return
        children: list[yaml.Node] = []
        if isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        elif isinstance(node, yaml.MappingNode):
            children = [n for pair in node.value for n in pair]
        measured = [self._sizes.get(id(c), (1, 1)) for c in children]
        size = 1 + sum(m[0] for m in measured)
        depth = 1 + max((m[1] for m in measured), default=0)
        if size > MAX_YAML_NODES:
            raise _refused(f"expands to more than {MAX_YAML_NODES} values (aliases)", event)
        if depth > MAX_YAML_DEPTH:
            raise _refused(f"nested deeper than {MAX_YAML_DEPTH} levels (aliases)", event)
        self._sizes[id(node)] = (size, depth)


class AnchoredYamlLoader(UserYamlLoader):
    """:class:`UserYamlLoader` that allows anchors, aliases and ``<<:`` merge keys (the prompt
    files inherit versions with them), still bounded by MAX_YAML_NODES and MAX_YAML_DEPTH."""

    allow_aliases = True


def yaml_error_line(path: Path | str, err: yaml.YAMLError) -> str:
    """``<path>: line N: <problem>`` for a YAML error (``<path>: <error>`` without a mark)."""
    mark = getattr(err, "problem_mark", None)
    problem = getattr(err, "problem", None) or str(err)
    where = f" line {mark.line + 1}:" if mark is not None else ""
    return one_line(f"{path}:{where} invalid YAML: {problem}")


def load_user_yaml(
    text: str,
    path: Path | str,
    error: type[RagcourtError] = ConfigError,
    loader: type[UserYamlLoader] = UserYamlLoader,
) -> Any:
    """The value of YAML ``text`` read from ``path``; any problem (syntax, anchor, alias, too
    deep) raises ``error`` with one line naming the file and line."""
    try:
        return yaml.load(text, Loader=loader)
    except yaml.YAMLError as err:
        raise error(yaml_error_line(path, err)) from None
    except RecursionError:  # a belt to MAX_YAML_DEPTH's braces (deep flow collections)
        raise error(f"{path}: invalid YAML: nested too deeply") from None


def read_user_yaml(
    path: Path | str,
    error: type[RagcourtError] = ConfigError,
    *,
    empty: Any = None,
    loader: type[UserYamlLoader] = UserYamlLoader,
) -> Any:
    """:func:`load_user_yaml` of the file ``path`` (``empty`` when it holds no document)."""
    path = Path(path)
    value = load_user_yaml(path.read_text(encoding="utf-8"), path, error, loader)
    return empty if value is None else value
