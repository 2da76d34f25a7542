"""The one safe-name rule for user-chosen keys that become file names or DVC stage arguments.

A safe name full-matches ``[A-Za-z0-9][A-Za-z0-9_.-]{0,max_len-1}`` (no trailing newline),
contains no ``..`` and is not a reserved Windows device name (CON, PRN, AUX, NUL, COM1-9,
LPT1-9; any case, also with an extension such as ``nul.txt``). Chunking keys, embedder keys
and system names are checked with it before any path or command is built; names of one
collection must also differ case-insensitively (they name files on case-insensitive disks).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

SAFE_NAME_MAX = 64
SAFE_NAME_HINT = "letters, digits, '_', '.', '-'; starting with a letter or digit; no '..'"
_RESERVED = frozenset(
    {"con", "prn", "aux", "nul"}
    | {f"com{i}" for i in range(1, 10)}
    | {f"lpt{i}" for i in range(1, 10)}
)


def _pattern(max_len: int) -> re.Pattern[str]:
    return re.compile(rf"[A-Za-z0-9][A-Za-z0-9_.-]{{0,{max_len - 1}}}")


_PATTERNS: dict[int, re.Pattern[str]] = {}


def unsafe_reason(value: object, max_len: int = SAFE_NAME_MAX) -> str | None:
    """Why ``value`` is not a safe name (``None`` when it is)."""
    if not isinstance(value, str):
        return f"must be a string, got {type(value).__name__}"
    pattern = _PATTERNS.setdefault(max_len, _pattern(max_len))
    if not pattern.fullmatch(value):
        return f"is not a safe name ({SAFE_NAME_HINT}; at most {max_len} characters)"
    if ".." in value:
        return f"is not a safe name ({SAFE_NAME_HINT})"
    if value.split(".", 1)[0].lower() in _RESERVED:
        return "is a reserved device name on Windows (CON, PRN, AUX, NUL, COM1-9, LPT1-9)"
    return None


def is_safe_name(value: object, max_len: int = SAFE_NAME_MAX) -> bool:
    return unsafe_reason(value, max_len) is None


def check_safe_name(value: str, what: str, max_len: int = SAFE_NAME_MAX) -> str:
    """``value`` if safe, else ``ValueError("<what> '<value>' <reason>")`` (one line)."""
    reason = unsafe_reason(value, max_len)
    if reason is not None:
        raise ValueError(f"{what} {value!r} {reason}")
    return value


def case_collision(names: Iterable[str]) -> tuple[str, str] | None:
    """The first pair of distinct names equal ignoring case, or ``None``."""
    seen: dict[str, str] = {}
    for name in names:
        folded = name.casefold()
        other = seen.get(folded)
        if other is not None and other != name:
            return other, name
        seen.setdefault(folded, name)
    return None
