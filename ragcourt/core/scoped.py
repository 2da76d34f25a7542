"""A context variable set for the length of a ``with`` block."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar

T = TypeVar("T")


@contextmanager
def scoped(var: ContextVar[T | None], value: T) -> Iterator[T]:
    """``var`` holds ``value`` within the block (this context, and the tasks started from it)
    and its previous value after it, however the block ends; yields ``value``."""
    token = var.set(value)
    try:
        yield value
    finally:
        var.reset(token)
