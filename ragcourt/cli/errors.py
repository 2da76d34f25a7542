"""One-line user errors for every ``ragcourt`` command: :func:`print_error` and the decorator.

:func:`print_error` writes ``ragcourt: error: <message>`` to stderr as exactly one plain line:
no rich markup is interpreted, nothing is wrapped or cut whatever the terminal width or the
length of a path, and control characters in the message are escaped
(:func:`ragcourt.core.errors.one_line`: a newline becomes ``\\n``). Only the prefix is
coloured, and only on a terminal. :func:`user_errors` turns a
:class:`~ragcourt.core.errors.RagcourtError` raised by a command into that line and exit
code 2 (no traceback).
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from typing import ParamSpec, TextIO, TypeVar

import typer

from ragcourt.cli.consoles import cli_console
from ragcourt.core.errors import RagcourtError, one_line
from ragcourt.core.redact import redact_urls_in

P = ParamSpec("P")
T = TypeVar("T")

ERROR_PREFIX = "ragcourt: error:"
WARNING_PREFIX = "ragcourt: warning:"
_RED, _YELLOW, _RESET = "\x1b[31m", "\x1b[33m", "\x1b[0m"

err_console = cli_console(stderr=True)  # progress bars and notes on stderr (never errors)


def _colour(stream: TextIO) -> bool:
    """Colour the prefix: the stream is a terminal and NO_COLOR is not set."""
    if os.environ.get("NO_COLOR"):
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def print_line(prefix: str, message: object, colour: str = _RED) -> None:
    """``<prefix> <message>`` as one plain line on stderr (see the module docstring), URL
    secrets redacted."""
    stream = sys.stderr  # looked up now: a test runner may have replaced it
    head = f"{colour}{prefix}{_RESET}" if _colour(stream) else prefix
    stream.write(f"{head} {one_line(redact_urls_in(str(message)))}\n")
    stream.flush()


def print_error(message: object) -> None:
    """``ragcourt: error: <message>`` as one plain line on stderr."""
    print_line(ERROR_PREFIX, message)


def print_warning(message: object) -> None:
    """``ragcourt: warning: <message>`` as one plain line on stderr."""
    print_line(WARNING_PREFIX, message, _YELLOW)


def user_errors(fn: Callable[P, T]) -> Callable[P, T]:
    """RagcourtError -> 'ragcourt: error: ...' (one line) on stderr and exit code 2."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return fn(*args, **kwargs)
        except RagcourtError as err:
            print_error(err)
            raise typer.Exit(2) from None

    return wrapper
