"""DVC sees exactly a stage's code: in a throwaway git + DVC repo holding the generated ``code``
step and ``judge`` stage (judge's lock recorded with ``dvc commit``, no model run), editing the
shuffled control's module re-runs the code step and leaves ``judge`` up to date; editing a module
judging imports, or the stage's own folder (``stages/judge``), does not."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ragcourt.orchestration import dvc_yaml
from ragcourt.orchestration.stage_graph import CODE_STEP

ROOT = Path(__file__).resolve().parents[2]


def _dvc(ws: Path, *args: str) -> str:
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env["DVC_NO_ANALYTICS"] = "1"
    proc = subprocess.run(
        [sys.executable, "-m", "dvc", *args], cwd=ws, capture_output=True, text=True, env=env
    )
    assert proc.returncode == 0, f"dvc {' '.join(args)}:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def _touch_all(ws: Path) -> None:
    """Create every file the judge stage reads or writes (placeholder bytes): dvc commit
    then records the lock without running the stage."""
    from dvc.repo import Repo

    with Repo(str(ws)) as repo:
        (stage,) = [s for s in repo.index.stages if s.name == "judge"]
        paths = [d.fs_path for d in stage.deps if type(d).__name__ != "ParamsDependency"]
        paths += [o.fs_path for o in stage.outs]
    for p in map(Path, paths):
        if not p.exists():
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text("{}\n" if p.suffix == ".json" else "placeholder\n")


def _status(ws: Path) -> dict[str, object]:
    status: dict[str, object] = json.loads(_dvc(ws, "status", "--json", "judge") or "{}")
    return status


def test_an_edit_outside_judges_imports_leaves_judge_up_to_date(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    ws = tmp_path / "repo"
    ws.mkdir()
    skip = shutil.ignore_patterns("__pycache__")
    for folder in ("ragcourt", "stages"):
        shutil.copytree(ROOT / folder, ws / folder, ignore=skip)
    shutil.copytree(ROOT / "configs", ws / "configs")
    shutil.copy(ROOT / "params.yaml", ws / "params.yaml")
    stages = yaml.safe_load(dvc_yaml.render(ws))["stages"]
    kept = {name: stages[name] for name in (CODE_STEP, "judge")}
    (ws / "dvc.yaml").write_text(yaml.safe_dump({"stages": kept}, sort_keys=False))
    for args in (["init", "-q"], ["config", "user.email", "t@example.com"],
                 ["config", "user.name", "t"]):  # fmt: skip
        subprocess.run(["git", *args], cwd=ws, check=True)
    _dvc(ws, "init", "-q")
    _dvc(ws, "repro", CODE_STEP)
    _touch_all(ws)
    _dvc(ws, "commit", "-f", "judge")
    assert _status(ws) == {}

    shuffled = sorted(ws.glob("ragcourt/answering/**/shuffled.py"))
    assert shuffled, "no module of the shuffled control"
    for f in shuffled:
        f.write_text(f.read_text() + "\n# an edit that cannot change a verdict\n")
    assert "Running stage 'code'" in _dvc(ws, "repro", CODE_STEP)
    assert _status(ws) == {}

    dafe = ws / "ragcourt/judging/dafe.py"
    dafe.write_text(dafe.read_text() + "\n# an edit to the judge's own code\n")
    _dvc(ws, "repro", CODE_STEP)
    assert "judge" in _status(ws)

    _dvc(ws, "commit", "-f", "judge")
    assert _status(ws) == {}
    declaration = ws / "stages/judge/__init__.py"
    declaration.write_text(declaration.read_text() + "\n# an edit to the stage's declaration\n")
    _dvc(ws, "repro", CODE_STEP)
    assert "judge" in _status(ws)
