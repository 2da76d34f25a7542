"""JSON that users hand the pipeline (answers files, label files, QA files, HTTP replies),
parsed with its nesting bounded: deeper than :data:`MAX_JSON_DEPTH` is a ``ValueError``
(never a ``RecursionError`` traceback), so every reader's ``except ValueError`` turns it into
its usual one line naming the file and line."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

MAX_JSON_DEPTH = 64
"""Deepest nesting of arrays / objects accepted in a user JSON value (real records: < 6)."""


class JsonTooDeep(ValueError):
    """A JSON value nested deeper than MAX_JSON_DEPTH (or than Python's recursion limit)."""


def json_depth(value: Any) -> int:
    """Nesting depth of a parsed JSON value (a scalar: 0), computed without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        deepest = max(deepest, depth + 1)
        if deepest > MAX_JSON_DEPTH:
            return deepest
        stack.extend((child, depth + 1) for child in children)
    return deepest


def loads_user_json(text: str | bytes, parse_constant: Callable[[str], Any] | None = None) -> Any:
    """``json.loads(text)``; :class:`JsonTooDeep` (a ValueError) past MAX_JSON_DEPTH levels."""
    try:
        value = json.loads(text, parse_constant=parse_constant)
    except RecursionError:
        raise JsonTooDeep(f"JSON nested deeper than {MAX_JSON_DEPTH} levels") from None
    if json_depth(value) > MAX_JSON_DEPTH:
        raise JsonTooDeep(f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
    return value
