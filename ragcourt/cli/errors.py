"""One-line user errors for every ``ragcourt`` command: the stderr console and the decorator.

:func:`user_errors` turns a :class:`~ragcourt.core.errors.RagcourtError` raised by a command
into ``ragcourt: error: <message>`` on stderr and exit code 2 (no traceback).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

import typer
from rich.console import Console

from ragcourt.core.errors import RagcourtError

P = ParamSpec("P")
T = TypeVar("T")

err_console = Console(stderr=True)


def user_errors(fn: Callable[P, T]) -> Callable[P, T]:
    """RagcourtError -> 'ragcourt: error: ...' on stderr and exit code 2."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return fn(*args, **kwargs)
        except RagcourtError as err:
            err_console.print(f"[red]ragcourt: error:[/red] {err}", highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None

    return wrapper
