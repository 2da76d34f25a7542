"""The live race on real components: three systems answer from answers files (one always
right, one right on every other question, one never), the real judge stage's DAFE and trained
correctness grade them, the correctness_margin pairwise judge compares them, and the race
drops the one that is never right while only the survivors answer the next rounds. A re-run
reads every round's files (no answering, no judging); a lost round file is made again alone.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from _tournament_data import qa_frame
from typer.testing import CliRunner

from ragcourt.cli.main import app

ROOT = Path(__file__).resolve().parents[2]
N_Q = 40
WRONG = "The river Nile flows north into the sea."


def _answer(system: str, j: int) -> str:
    right = f"Fact {j} is {j * 7}."
    return {"sure": right, "half": right if j % 2 == 0 else WRONG}.get(system, WRONG)


def make_project(tmp: Path, names: tuple[str, ...] = ("sure", "half", "never")) -> Path:
    """A workspace with the QA set, params and one answers file per system of ``names``."""
    shutil.copytree(ROOT / "configs", tmp / "configs")
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    params["controls"]["kinds"] = []
    params["judge"]["arbitrator"] = "token_f1"  # no model call: token F1 breaks a tie
    params["judge"]["primaries"] = ["trained", "ref_similarity"]
    params["race"] = {"round_questions": 10, "rounds": 4, "alpha": 0.05, "opponents": 2, "seed": 0}
    (tmp / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    (tmp / "data/qa").mkdir(parents=True)
    qa_frame(N_Q).write_parquet(tmp / "data/qa/qa.parquet")
    systems = []
    for name in names:
        path = tmp / f"data/external/{name}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        rows = [
            {"question_id": f"q{j:02d}", "answer": _answer(name, j)}
            for j in range(N_Q)
            if name != "silent"
        ]
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        systems.append(
            {"name": name, "kind": "answers_file", "path": f"data/external/{name}.jsonl"}
        )
    (tmp / "configs/systems.yaml").write_text(yaml.safe_dump({"systems": systems}))
    return tmp


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_project(tmp_path_factory.mktemp("race"))


def _race(project: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, Any], str]:
    monkeypatch.chdir(project)
    res = CliRunner().invoke(app, ["race"])
    assert res.exit_code == 0, res.output
    return json.loads((project / "data/race/summary.json").read_text()), res.output


def _mtimes(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.stat().st_mtime_ns for p in folder.rglob("*.parquet")}


def test_the_never_right_system_leaves_and_only_survivors_answer_later(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary, output = _race(project, monkeypatch)
    left = {e["system"]: e["round"] for e in summary["exits"]}
    assert "never" in left and "sure" not in left, summary["exits"]
    assert summary["leader"] == "sure"
    rounds = project / "data/race/rounds"
    for played in summary["rounds"]:
        r = played["round"]
        answered = {p.stem for p in (rounds / f"{r:03d}" / "answers").glob("*.parquet")}
        expected = set(played["survivors"])
        assert answered == expected, (r, answered, expected)
        assert (rounds / f"{r:03d}" / "pairwise.parquet").is_file()
    later = rounds / f"{left['never'] + 1:03d}" / "answers"  # the round after it left
    assert not (later / "never.parquet").exists()
    assert summary["calls"]["total"] < summary["round_robin_calls"]["total"]
    assert "never" in output


def test_a_rerun_reads_every_round_and_a_lost_file_is_made_again_alone(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rounds = project / "data/race/rounds"
    first, _ = _race(project, monkeypatch)
    before = _mtimes(rounds)
    again, _ = _race(project, monkeypatch)
    assert again == first and _mtimes(rounds) == before
    lost = rounds / "002" / "pairwise.parquet"
    lost.unlink()
    third, _ = _race(project, monkeypatch)
    after = _mtimes(rounds)
    assert third == first
    assert {k for k in after if after[k] != before.get(k)} == {"002/pairwise.parquet"}


def test_the_dvc_command_runs_the_same_stage(project: Path) -> None:
    """``python -m stages race`` (what dvc.yaml runs) from a project with the stages folder."""
    shutil.copytree(ROOT / "stages", project / "stages", dirs_exist_ok=True)
    proc = subprocess.run(
        [sys.executable, "-m", "stages", "race"], cwd=project, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads((project / "data/race/summary.json").read_text())["rounds_played"] >= 2


def test_a_system_whose_every_answer_failed_fails_the_race_after_its_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The failure policy (failure.fail_on_system) holds for the race's answers: every
    question of a system is an error row, so the race fails with one line naming it, after
    writing the summary."""
    root = make_project(tmp_path, ("sure", "silent"))
    monkeypatch.chdir(root)
    res = CliRunner().invoke(app, ["race"])
    errors = [line for line in res.output.splitlines() if line.startswith("ragcourt: error")]
    assert res.exit_code != 0 and len(errors) == 1, res.output
    assert "every row failed for 'silent'" in errors[0]
    assert (root / "data/race/summary.json").is_file()


def test_fewer_questions_than_a_round_play_no_round_and_still_write_every_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A QA set smaller than ``race.round_questions`` (a small corpus): no round is played,
    and the summary and the rounds folder (both stage outputs under DVC) are still written."""
    project = make_project(tmp_path, ("sure", "never"))
    qa_frame(5).write_parquet(project / "data/qa/qa.parquet")
    summary, _ = _race(project, monkeypatch)
    assert summary["rounds_played"] == 0 and summary["stopped"] == "questions"
    assert summary["winner"] is None
    assert (project / "data/race/rounds").is_dir()
