"""One-line user errors (cli/errors.py): the decorator's exit code, the exact stderr line,
and user text that cannot break the line or be read as markup."""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from ragcourt.cli.errors import ERROR_PREFIX, print_error, print_warning, user_errors
from ragcourt.core.errors import ConfigError

app = typer.Typer()


@app.command()
@user_errors
def check(value: str) -> None:
    """Echo ``value``, or fail with a user error naming it."""
    if value.startswith("bad"):
        raise ConfigError(f"params.yaml: key 'x': {value} is not allowed")
    typer.echo(f"ok {value}")


def test_user_error_is_one_stderr_line_and_exit_2() -> None:
    res = CliRunner().invoke(app, ["bad\nsecond [red]line[/red]"])
    assert res.exit_code == 2
    assert res.stdout == ""
    assert res.stderr == (
        f"{ERROR_PREFIX} params.yaml: key 'x': bad\\nsecond [red]line[/red] is not allowed\n"
    )


def test_success_passes_through() -> None:
    res = CliRunner().invoke(app, ["fine"])
    assert (res.exit_code, res.stdout, res.stderr) == (0, "ok fine\n", "")


def test_other_exceptions_are_not_user_errors() -> None:
    @user_errors
    def boom() -> None:
        raise ValueError("a bug")

    with pytest.raises(ValueError, match="a bug"):
        boom()


def test_print_error_and_warning_escape_control_characters(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    print_error("file a.txt\r\nrow 3")
    print_warning("tab\there")
    err = capsys.readouterr().err
    assert err.splitlines() == [
        f"{ERROR_PREFIX} file a.txt\\r\\nrow 3",
        "ragcourt: warning: tab\\there",
    ]
