"""User errors of the ``ragcourt`` CLI and the stage entries stay one plain line on stderr:
real processes writing to a pipe with ``COLUMNS=40``, a path of 200+ characters, and user
values holding rich markup (``[/red]``) and a newline. Nothing is wrapped, cut, interpreted
as markup or split: the full path and the escaped value are on the line, exit code 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from _tiny_project import ROOT, tool_env

WEIRD = "we[/red]ird\nname[bold]"
WEIRD_SHOWN = "we[/red]ird\\nname[bold]"  # the newline made visible, the markup kept as text


def _long_dir(tmp_path: Path) -> Path:
    """An existing folder whose path is at least 200 characters long."""
    pad = max(1, 200 - len(str(tmp_path)) - 1)
    folder = tmp_path / ("long-" + "x" * pad)
    folder.mkdir()
    assert len(str(folder)) >= 200
    return folder


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = tool_env() | {"COLUMNS": "40", "NO_COLOR": "1"}
    env.pop("FORCE_COLOR", None)
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def _one_error_line(proc: subprocess.CompletedProcess[str], *needles: str) -> str:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and "MarkupError" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    [line] = lines
    assert line.startswith("ragcourt: error: "), line
    for needle in needles:
        assert needle in line, (needle, line)
    return line


@pytest.fixture
def weird(tmp_path: Path) -> tuple[Path, Path]:
    """(a 200+ character folder, a folder inside it named with markup and a newline)."""
    long = _long_dir(tmp_path)
    inner = long / WEIRD
    inner.mkdir(parents=True)  # "we[" holds "red]ird\nname[bold]"
    return long, inner


def test_missing_params_file_is_one_line_on_a_narrow_pipe(weird: tuple[Path, Path]) -> None:
    long, _ = weird
    params = f"{long}/{WEIRD}/params.yaml"
    for args in (["systems", "list"], ["cache", "stats"], ["cache", "verify"]):
        proc = _run(["-m", "ragcourt.cli.main", *args, "--params", params], long)
        line = _one_error_line(proc, f"{long}/{WEIRD_SHOWN}/params.yaml", "params file not found")
        assert len(line) > 240  # longer than any wrap width: nothing was cut


def test_cache_migrate_error_is_one_line_with_the_full_path(weird: tuple[Path, Path]) -> None:
    long, inner = weird
    proc = _run(["-m", "ragcourt.cli.main", "cache", "migrate", "--cache-dir", str(inner)], long)
    _one_error_line(
        proc, f"{long}/{WEIRD_SHOWN}/cache.db: no old diskcache file to migrate"
    )  # the message that used to wrap mid-word ("no \nold diskcache file")


def test_unknown_profile_name_with_markup_is_printed_as_text(weird: tuple[Path, Path]) -> None:
    long, _ = weird
    proc = _run(["-m", "ragcourt.cli.main", "profile", "apply", WEIRD], long)
    _one_error_line(proc, f"unknown profile '{WEIRD_SHOWN}'")


def test_answers_import_bad_file_is_one_line(weird: tuple[Path, Path]) -> None:
    long, inner = weird
    bad = inner / "answers[bold]\n.txt"
    bad.write_text("not answers\n", encoding="utf-8")
    args = ["-m", "ragcourt.cli.main", "answers", "import", str(bad), "--system", "team-b"]
    proc = _run(args, ROOT)  # the project's params.yaml; the file name is refused first
    _one_error_line(proc, f"{long}/{WEIRD_SHOWN}/answers[bold]\\n.txt: answers file must end in")


def test_stage_entry_error_is_one_line_with_the_escaped_path(weird: tuple[Path, Path]) -> None:
    long, _ = weird
    params = f"{long}/{WEIRD}/params.yaml"
    proc = _run(["-m", "stages", "ingest", "--params", params], ROOT)
    _one_error_line(proc, f"{long}/{WEIRD_SHOWN}/params.yaml: params file not found")


def test_usage_error_line_is_not_boxed_or_wrapped(tmp_path: Path) -> None:
    proc = _run(["-m", "ragcourt.cli.main", "answers", "import", "a.jsonl"], tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "Error: Missing option '--system'." in proc.stderr.splitlines()
    assert "╭" not in proc.stderr and "│" not in proc.stderr
