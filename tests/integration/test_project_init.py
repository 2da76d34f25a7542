"""``ragcourt init DIR`` makes a project where DVC runs the stages from its own ``stages/``
(real git, real DVC, the ingest stage run for real); a folder with anything in it is refused
in one line and left as it was."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import yaml
from typer.testing import CliRunner

from ragcourt.cli.main import app

runner = CliRunner()


def test_init_makes_a_project_that_dvc_repro_runs(tmp_path: Path) -> None:
    dest = tmp_path / "new project"
    res = runner.invoke(app, ["init", str(dest)])
    assert res.exit_code == 0, res.output
    for rel in ("params.yaml", "configs/systems.yaml", "stages/__init__.py", "stages/judge",
                "flows/pipeline.py", "data/corpus", "dvc.yaml", ".git", ".dvc"):  # fmt: skip
        assert (dest / rel).exists(), rel
    stages = yaml.safe_load((dest / "dvc.yaml").read_text())["stages"]
    # the library is the installed package: the code step reads stages/ only, no ragcourt/
    assert stages["code"]["deps"] == ["stages"]
    assert {"data/code/stages.yaml": ["ingest"]} in stages["ingest"]["params"]
    assert not any(
        str(d).startswith("ragcourt")
        for body in stages.values()
        for d in (body.get("do") or body)["deps"]
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # its own stages/ only
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["DVC_NO_ANALYTICS"] = "1"
    proc = subprocess.run(
        [sys.executable, "-m", "dvc", "repro", "ingest"],
        cwd=dest,
        env=env,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    digests = yaml.safe_load((dest / "data/code/stages.yaml").read_text())
    assert set(digests) >= {"ingest", "report"}  # every stage's, from the installed library
    docs = pl.read_parquet(dest / "data/documents.parquet")
    assert docs.height == len(list((dest / "data/corpus").iterdir()))


def test_init_refuses_a_folder_that_is_not_empty(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine\n")
    res = runner.invoke(app, ["init", str(tmp_path), "--no-vcs"])
    assert res.exit_code == 2
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and "not an empty folder" in lines[0], res.output
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]
