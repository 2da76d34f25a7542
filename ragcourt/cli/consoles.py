"""The CLI's rich consoles: text is printed as data and, off a terminal, never wrapped.

:func:`cli_console` makes a console that interprets no markup, highlighting or emoji codes in
what it prints (a ``[/x]`` in a path or a question id is printed as written) and that, when its
stream is not a terminal (a pipe, a file, a test runner), ignores ``COLUMNS`` and the terminal
width: lines are neither wrapped nor cut, tables are as wide as their content. On a terminal
it uses the terminal's width. Styled text is passed as :class:`rich.text.Text`.
"""

from __future__ import annotations

from rich.console import Console, ConsoleDimensions

UNWRAPPED_WIDTH = 1_000_000  # the width off a terminal: no line is wrapped at it


class CliConsole(Console):
    """A :class:`Console` whose width is unlimited when its stream is not a terminal (checked
    at every print, so a test runner's captured stream counts as a pipe)."""

    def on_terminal(self) -> bool:
        """Whether the stream printed to now is a terminal (``isatty``; FORCE_COLOR aside)."""
        isatty = getattr(self.file, "isatty", None)
        try:
            return bool(isatty is not None and isatty())
        except ValueError:  # a closed stream
            return False

    @property
    def size(self) -> ConsoleDimensions:
        dims = super().size
        return dims if self.on_terminal() else ConsoleDimensions(UNWRAPPED_WIDTH, dims.height)

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        self._width, self._height = new_size


def cli_console(*, stderr: bool = False) -> CliConsole:
    """A console for stdout (or stderr): no markup, highlighting or emoji; soft wrap only."""
    return CliConsole(stderr=stderr, markup=False, highlight=False, emoji=False, soft_wrap=True)
