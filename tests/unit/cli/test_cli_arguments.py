"""Argument handling of the ``ragcourt`` app (typer's CliRunner, in a temp folder): unknown
commands and missing arguments are usage errors, user mistakes are one-line errors (exit 2)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragcourt.cli.errors import ERROR_PREFIX
from ragcourt.cli.main import app


@pytest.fixture()
def runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.chdir(tmp_path)  # an empty folder: no params.yaml, no configs/
    monkeypatch.setenv("NO_COLOR", "1")
    return CliRunner()


def test_help_lists_the_command_groups(runner: CliRunner) -> None:
    res = runner.invoke(app, ["--help"])
    assert res.exit_code == 0
    for name in ("run", "report", "doctor", "cache", "systems", "dvc", "label", "profile"):
        assert name in res.stdout, name


def test_unknown_command_is_a_usage_error(runner: CliRunner) -> None:
    res = runner.invoke(app, ["frobnicate"])
    assert res.exit_code == 2 and "No such command" in res.stderr


def test_missing_argument_is_a_usage_error(runner: CliRunner) -> None:
    res = runner.invoke(app, ["profile", "show"])
    assert res.exit_code == 2 and "Missing argument 'name'" in res.stderr


def test_dvc_generate_outside_a_project_is_one_line(runner: CliRunner, tmp_path: Path) -> None:
    res = runner.invoke(app, ["dvc", "generate", "--check"])
    assert res.exit_code == 2
    assert res.stderr.splitlines() == [
        f"{ERROR_PREFIX} {tmp_path}: no params.yaml here; run from the project root"
    ]
    assert not (tmp_path / "dvc.yaml").exists()


def test_missing_params_file_names_the_file(runner: CliRunner) -> None:
    res = runner.invoke(app, ["systems", "list", "--params", "nowhere.yaml"])
    assert res.exit_code == 2
    (line,) = res.stderr.splitlines()
    assert line.startswith(ERROR_PREFIX) and "nowhere.yaml" in line


def test_unknown_profile_is_one_line(runner: CliRunner) -> None:
    res = runner.invoke(app, ["profile", "show", "no-such-profile"])
    assert res.exit_code == 2
    (line,) = res.stderr.splitlines()
    assert line.startswith(ERROR_PREFIX) and "no-such-profile" in line
