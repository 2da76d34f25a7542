"""``ragcourt race --replay`` on a scripted tournament: the real tournament stage judges every
pair on scripted correctness scores (no model), then the race replays those judgements in
rounds. It separates the scripted best, reports who left when and why, counts the calls
against the round-robin of the same questions, writes its summary through the catalog and
the report shows it with the narrowing plot."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _tournament_data import scripted_tournament_run
from typer.testing import CliRunner

from ragcourt.cli.main import app
from ragcourt.orchestration.params import load_params
from ragcourt.tournament.race import RaceResult

N_Q = 40
REAL = {"alpha": 0.95, "bravo": 0.6, "charlie": 0.3, "delta": 0.05}
CONTROLS = {"control-oracle": "oracle", "control-random": "random"}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    strengths = REAL | {"control-oracle": 1.0, "control-random": 0.1}
    return scripted_tournament_run(tmp_path_factory.mktemp("race"), strengths, CONTROLS, N_Q)


def race(ws: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, str]:
    monkeypatch.chdir(ws)
    res = CliRunner().invoke(app, ["race", *args])
    return res.exit_code, res.output


def test_replay_separates_the_best_and_counts_calls(
    run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out = race(run, monkeypatch, "--replay", "--round-questions", "10", "--rounds", "4")
    assert code == 0, out
    result = RaceResult.model_validate(json.loads((run / "data/race/replay.json").read_text()))
    assert result.winner == "alpha" and result.stopped == "separated"
    assert {e.system for e in result.exits} == {"bravo", "charlie", "delta"}  # no control raced
    assert all(e.upper_bound < 0.5 for e in result.exits)
    assert result.per_test_alpha == pytest.approx(0.05 / (4 * 3))
    # answer calls: survivors x questions; judge calls: 2 orders x pairs x questions
    assert result.calls.answers == sum(len(r.survivors) * r.questions for r in result.rounds)
    assert result.calls.judge == sum(2 * r.pairs * r.questions for r in result.rounds)
    q = result.questions_used
    assert (result.round_robin_calls.answers, result.round_robin_calls.judge) == (4 * q, 12 * q)
    assert result.calls_fraction is not None and result.calls_fraction < 1
    lines = out.splitlines()
    assert lines[0].startswith("winner: alpha (stopped: separated;")
    assert any(line.startswith("left in round ") and "delta" in line for line in lines)
    assert any(line.startswith("calls: ") and "round-robin" in line for line in lines)
    assert "round-robin best on all 40 questions: alpha" in out

    # the same draw again gives the same race; the report shows it with its plot
    code, again = race(run, monkeypatch, "--replay", "--round-questions", "10", "--rounds", "4")
    assert code == 0 and again == out
    from ragcourt.reporting.stage import build

    _, md, sections = build(load_params(run / "params.yaml"))
    sec = next(s for s in sections if s.key == "race")
    assert ("winner", "alpha") in sec.facts and sec.figures[0].name == "race"
    assert "When and why each configuration left" in md


def test_the_live_race_without_its_inputs_is_one_line_naming_the_missing_one(
    run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without --replay the race answers live: a workspace without chunks is one line."""
    code, out = race(run, monkeypatch)
    assert code == 2 and out.count("\n") == 1
    assert "data/chunks/" in out and "chunk stage" in out
