"""The real dvc.yaml `tournament` block runs under DVC in a temp git repo, and is then cached."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from integration.test_tournament_stage import STRENGTHS, _workspace  # tests/ is on the path

from ragcourt.core import catalog
from ragcourt.core.io import read_table
from ragcourt.orchestration.stage_graph import CODE_STEP

ROOT = Path(__file__).resolve().parents[2]


def _run(args: list[str], cwd: Path) -> str:
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout + proc.stderr


@pytest.mark.slow  # ~40 s: four DVC invocations on 2 shared cores
def test_dvc_repro_tournament_block(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, STRENGTHS)
    for d in ("ragcourt", "stages"):  # the block's code deps
        shutil.copytree(ROOT / d, ws / d, ignore=shutil.ignore_patterns("__pycache__"))
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    blocks = {name: stages[name] for name in (CODE_STEP, "tournament")}  # its code digest
    (ws / "dvc.yaml").write_text(yaml.safe_dump({"stages": blocks}))
    routes = ws / catalog.path("llm_routes")  # the llm_routes stage's file: a plain input here
    routes.parent.mkdir(parents=True, exist_ok=True)
    routes.write_text("{}\n")
    dvc = [sys.executable, "-m", "dvc"]
    _run(["git", "init", "-q"], ws)
    _run([*dvc, "init", "-q"], ws)
    _run([*dvc, "repro", "tournament"], ws)
    board = read_table(ws / "data/tournament/leaderboard.parquet", "leaderboard")
    assert board["system"][0] == "alpha"
    assert (ws / "data/tournament/leaderboard.png").is_file()
    assert "didn't change" in _run([*dvc, "repro", "tournament"], ws)
    metrics = _run([*dvc, "metrics", "show"], ws)
    assert "summary.json" in metrics
