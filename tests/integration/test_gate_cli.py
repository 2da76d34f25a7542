"""``ragcourt gate`` on scripted tournaments with known gaps: the real tournament stage runs on
a scripted correctness table (the ``correctness_margin`` judge reads it: no model), with
controls, then the real command reads the run's summary through the catalog. Every exit
code appears, the boundaries are placed exactly on the interval the stage wrote, the JUnit
file parses, and the report gets a gate section."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from _tournament_data import scripted_tournament_run
from typer.testing import CliRunner

from ragcourt.cli.main import app
from ragcourt.orchestration.params import load_params

ROOT = Path(__file__).resolve().parents[2]
N_Q = 20
REAL = {"prod": 0.6, "newer": 0.95, "broken": 0.15, "twin": 0.6}
CONTROLS = {"control-oracle": "oracle", "control-random": "random", "control-shuffled": "shuffled"}
GOOD_CONTROLS = {"control-oracle": 1.0, "control-random": 0.1, "control-shuffled": 0.0}
# the oracle scripted worse than random passages: the judges "cannot tell" -> validity fails
BAD_CONTROLS = {"control-oracle": 0.1, "control-random": 0.9, "control-shuffled": 0.0}


def scripted_run(tmp: Path, controls: dict[str, float]) -> Path:
    """A workspace after a real tournament stage on scripted correctness scores."""
    return scripted_tournament_run(tmp, REAL | controls, CONTROLS, N_Q)


@pytest.fixture(scope="module")
def good_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return scripted_run(tmp_path_factory.mktemp("gate_good"), GOOD_CONTROLS)


@pytest.fixture(scope="module")
def bad_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return scripted_run(tmp_path_factory.mktemp("gate_bad"), BAD_CONTROLS)


def gate(ws: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, str]:
    monkeypatch.chdir(ws)
    res = CliRunner().invoke(app, ["gate", *args])
    return res.exit_code, res.output


def gap(ws: Path, cand: str, base: str = "prod") -> tuple[float, float, float]:
    """cand − base and its interval, read from the summary the stage wrote."""
    summary = json.loads((ws / "data/tournament/summary.json").read_text())
    for p in summary["elo_gaps"]["pairs"]:
        if (p["better"], p["worse"]) == (cand, base):
            return p["elo_gap"], p["elo_gap_lo"], p["elo_gap_hi"]
        if (p["better"], p["worse"]) == (base, cand):
            return -p["elo_gap"], -p["elo_gap_hi"], -p["elo_gap_lo"]
    raise AssertionError(f"no pair {cand}/{base}")


def test_every_exit_code_on_a_valid_run(good_run: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, _, hi = gap(good_run, "broken")
    assert hi < 0  # the scripted gap is large: the interval excludes 0
    code, out = gate(good_run, monkeypatch, "--baseline", "prod")
    assert code == 1, out
    lines = out.strip().splitlines()
    assert len(lines) == 4  # one line per real candidate, then the decision
    assert any(line.startswith("broken: worse, gap ") for line in lines)
    assert any(line.startswith("newer: better, gap ") for line in lines)
    assert lines[-1].startswith("gate: exit 1: a candidate is significantly worse")
    assert "validity passed" in lines[-1]

    code, out = gate(good_run, monkeypatch, "--baseline", "prod", "--candidate", "newer")
    assert code == 0, out
    _, tlo, thi = gap(good_run, "twin")
    assert tlo < 0 < thi  # equal scripted strength: the interval holds 0
    code, out = gate(good_run, monkeypatch, "--baseline", "prod", "--candidate", "twin")
    assert code == 4, out
    assert "twin: undecided" in out and "not enough questions: about " in out


def test_exact_boundaries_on_the_interval_the_stage_wrote(
    good_run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, lo, hi = gap(good_run, "broken")
    at_hi = repr(-hi)  # upper bound == -margin: the interval holds -margin -> undecided
    code, out = gate(good_run, monkeypatch, "--baseline", "prod", "--candidate", "broken",
                     "--margin", at_hi)  # fmt: skip
    assert code == 4, out
    below = repr(float(np.nextafter(-hi, 0.0)))  # a hair less margin: upper bound < -margin
    code, _ = gate(good_run, monkeypatch, "--baseline", "prod", "--candidate", "broken",
                   "--margin", below)  # fmt: skip
    assert code == 1
    at_lo = repr(-lo)  # lower bound == -margin: still undecided
    code, _ = gate(good_run, monkeypatch, "--baseline", "prod", "--candidate", "broken",
                   "--margin", at_lo)  # fmt: skip
    assert code == 4
    above = repr(float(np.nextafter(-lo, np.inf)))  # lower bound > -margin: not worse
    code, out = gate(good_run, monkeypatch, "--baseline", "prod", "--candidate", "broken",
                     "--margin", above)  # fmt: skip
    assert code == 0 and "broken: not worse" in out


def test_validity_failure_comes_first(bad_run: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    summary = json.loads((bad_run / "data/tournament/summary.json").read_text())
    oracle_random = [
        p for p in summary["discrimination"]["pairs"] if p["worse"] == "control-random"
    ]
    assert oracle_random[0]["verdict"] != "separated"
    code, out = gate(bad_run, monkeypatch, "--baseline", "prod")
    assert code == 3, out  # even though "broken" is significantly worse
    assert "broken: worse" in out and "validity failed" in out.splitlines()[-1]


def test_junit_file_and_report_section(good_run: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, _ = gate(good_run, monkeypatch, "--baseline", "prod", "--junit", "out/gate.xml")
    assert code == 1
    root = ET.parse(good_run / "out/gate.xml").getroot()
    cases = {c.get("name"): c for c in root.iter("testcase")}
    assert set(cases) == {"newer vs prod", "broken vs prod", "twin vs prod"}
    assert cases["broken vs prod"].find("failure") is not None
    assert cases["twin vs prod"].find("error") is not None

    from ragcourt.reporting.stage import build

    params = load_params(good_run / "params.yaml")
    params.gate.baseline = "prod"
    monkeypatch.chdir(good_run)
    _, md, sections = build(params)
    sec = next(s for s in sections if s.key == "gate")
    assert ("decision", "exit 1: a candidate is significantly worse than the baseline") in sec.facts
    assert [r[:2] for r in sec.tables[0].rows] == [
        ["newer", "better"], ["twin", "undecided"], ["broken", "worse"]
    ]  # fmt: skip
    assert "Release gate" in md


def test_unknown_baseline_is_one_line(good_run: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, out = gate(good_run, monkeypatch, "--baseline", "control-oracle")
    assert code == 2
    assert "gate baseline 'control-oracle' is not a system of the tournament (known: " in out
    assert out.count("\n") == 1


def test_missing_run_names_the_summary_and_its_stage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copy(ROOT / "params.yaml", tmp_path / "params.yaml")
    code, out = gate(tmp_path, monkeypatch, "--baseline", "prod")
    assert code == 2 and "summary.json: not found (written by stage 'tournament'" in out
