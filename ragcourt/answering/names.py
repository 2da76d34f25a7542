"""System names: they name partition files, so they are checked before any path is built.

The rule is :mod:`ragcourt.core.names` (the one safe-name rule), with system names allowed up to
:data:`SYSTEM_NAME_MAX` characters as before. :class:`NamedSpec` is the systems-file entry
whose ``name`` is checked by it (every kind's spec extends it).
"""

from __future__ import annotations

import re

from pydantic import field_validator

from ragcourt.core.fixed_model import HandWrittenModel
from ragcourt.core.names import is_safe_name, unsafe_reason

SYSTEM_NAME_MAX = 100
# The character rule, for messages; the safe-name rule also refuses '..' and device names.
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")


def is_system_name(value: str) -> bool:
    """True when ``value`` is a safe system name (a safe partition file name)."""
    return is_safe_name(value, SYSTEM_NAME_MAX)


def check_system_name(value: str) -> str:
    """``value`` if it is a safe system name (a pydantic field validator body)."""
    reason = unsafe_reason(value, SYSTEM_NAME_MAX)
    if reason is not None:
        raise ValueError(
            f"system name {value!r} must match {NAME_RE.pattern} without '..' ({reason}; "
            "it names the partition file data/answers/systems/<name>.parquet)"
        )
    return value


class NamedSpec(HandWrittenModel):
    """A systems-file entry: its ``name`` is a safe system name (:func:`check_system_name`)."""

    name: str

    @field_validator("name")
    @classmethod
    def _name_is_file_safe(cls, value: str) -> str:
        return check_system_name(value)
