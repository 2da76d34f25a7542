"""System names: they name partition files, so they are checked before any path is built."""

from __future__ import annotations

import re

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")  # also a safe partition file name


def check_system_name(value: str) -> str:
    """``value`` if it matches :data:`NAME_RE` (a pydantic field validator body)."""
    if not NAME_RE.match(value):
        raise ValueError(
            f"system name '{value}' must match {NAME_RE.pattern} "
            "(it names the partition file data/answers/systems/<name>.parquet)"
        )
    return value
