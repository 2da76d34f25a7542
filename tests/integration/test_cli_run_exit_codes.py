"""``ragcourt run`` (DVC engine) exits with the failing stage's own code, not DVC's 255: a real
DVC project whose ingest stage runs through the real stage entry (``run_entry``)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from _tiny_project import make_project, tool_env
from typer.testing import CliRunner

from ragcourt.cli.dvc_runner import stage_exit_code
from ragcourt.cli.main import app

runner = CliRunner()
FAILING = {
    3: (
        "from ragcourt.core.entry import run_entry\n"
        "from ragcourt.core.errors import StageFailed\n"
        "def main():\n"
        "    raise StageFailed('ingest: 3/3 rows failed')\n"
        "run_entry(main)\n"
    ),
    2: (
        "from ragcourt.core.entry import run_entry\n"
        "from ragcourt.core.errors import RagcourtError\n"
        "def main():\n"
        "    raise RagcourtError('data/corpus/x.txt: not UTF-8')\n"
        "run_entry(main)\n"
    ),
    137: "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n",
}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    ws = make_project(tmp_path / "p", dvc=True)
    monkeypatch.chdir(ws)
    monkeypatch.setenv("PATH", tool_env()["PATH"])
    return ws


@pytest.mark.parametrize("code", [3, 2, 137])
def test_run_exits_with_the_failing_stage_code(project: Path, code: int) -> None:
    (project / "fail.py").write_text(FAILING[code])
    dvc = yaml.safe_load((project / "dvc.yaml").read_text())
    dvc["stages"]["ingest"]["cmd"] = "python fail.py"
    (project / "dvc.yaml").write_text(yaml.safe_dump(dvc, sort_keys=False))
    res = runner.invoke(app, ["run", "--until", "ingest"])
    assert res.exit_code == code, res.output
    if code == 3:
        assert "ragcourt: stage failed: ingest: 3/3 rows failed" in res.output


def test_stage_exit_code_rules() -> None:
    dvc_line = "ERROR: failed to reproduce 'x': failed to run: python a.py, exited with {}"
    assert stage_exit_code(0, [], "3\n") == 0
    assert stage_exit_code(255, [dvc_line.format(3)], "") == 3
    assert stage_exit_code(255, [dvc_line.format(-9)], "") == 137
    assert stage_exit_code(255, [dvc_line.format(1)], "2\n") == 2
    assert stage_exit_code(255, ["ERROR: unexpected error"], "") == 255
