"""The release gate's rule: verdicts at the exact boundaries, the exit-code precedence, the
validity check it reads, unknown names, and the JUnit XML (parsed back, hostile names)."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest

from ragcourt.core.errors import RagcourtError
from ragcourt.tournament.discrimination import EloPair, TournamentDiscrimination
from ragcourt.tournament.gate import (
    BETTER,
    EXIT_INVALID,
    EXIT_PASS,
    EXIT_UNDECIDED,
    EXIT_WORSE,
    NOT_WORSE,
    UNDECIDED,
    WORSE,
    GateValidity,
    check_names,
    classify,
    decide,
    exit_code,
    lines,
    validity_of,
)
from ragcourt.tournament.gate_junit import junit_xml

PASSED = GateValidity(status="passed", detail="1 of 1 pairs of controls separated", failed_pairs=[])
FAILED = GateValidity(status="failed", detail="1 of 1 not separated", failed_pairs=["o > r"])


@pytest.mark.parametrize(
    ("lo", "hi", "margin", "verdict"),
    [
        (-40.0, -20.0, 10.0, WORSE),  # hi < -m
        (-40.0, -10.0, 10.0, UNDECIDED),  # hi == -m: the closed interval holds -m
        (-10.0, 30.0, 10.0, UNDECIDED),  # lo == -m
        (np.nextafter(-10.0, 0.0), 30.0, 10.0, NOT_WORSE),  # lo just above -m
        (-40.0, np.nextafter(-10.0, -np.inf), 10.0, WORSE),  # hi just below -m
        (0.0, 30.0, 0.0, UNDECIDED),  # lo == -m == 0
        (1e-9, 30.0, 0.0, BETTER),  # lo > 0 (and > -m)
        (-5.0, 30.0, 10.0, NOT_WORSE),  # lo > -m but not > 0
        (2.0, 30.0, 10.0, BETTER),
    ],
)
def test_verdict_at_the_boundaries(lo: float, hi: float, margin: float, verdict: str) -> None:
    assert classify((lo + hi) / 2, lo, hi, margin, 40)[0] == verdict


def test_questions_needed_for_an_undecided_candidate() -> None:
    # gap -5, interval [-25, 15] (half-width 20), margin 0: 40 * (20 / 5)^2 = 640
    assert classify(-5.0, -25.0, 15.0, 0.0, 40) == (UNDECIDED, 640)
    # margin 10 moves the boundary: |gap + m| = 5 -> the same 640
    assert classify(-15.0, -35.0, 5.0, 10.0, 40) == (UNDECIDED, 640)
    # the gap sits on -m: no count decides it
    assert classify(-10.0, -30.0, 10.0, 10.0, 40) == (UNDECIDED, None)
    # no interval: undecided, nothing estimated
    assert classify(-5.0, None, None, 0.0, 40) == (UNDECIDED, None)
    assert classify(-100.0, -120.0, -80.0, 0.0, 40) == (WORSE, None)


def test_exit_code_precedence_validity_then_worse_then_undecided() -> None:
    assert exit_code(FAILED, [WORSE, UNDECIDED, BETTER]) == EXIT_INVALID
    assert exit_code(PASSED, [UNDECIDED, WORSE, BETTER]) == EXIT_WORSE
    assert exit_code(PASSED, [NOT_WORSE, UNDECIDED]) == EXIT_UNDECIDED
    assert exit_code(PASSED, [NOT_WORSE, BETTER]) == EXIT_PASS
    not_checked = GateValidity(status="not checked", detail="no controls", failed_pairs=[])
    assert exit_code(not_checked, [BETTER]) == EXIT_PASS
    assert (EXIT_PASS, EXIT_WORSE, EXIT_INVALID, EXIT_UNDECIDED) == (0, 1, 3, 4)


def _pair(better: str, worse: str, kinds: tuple[str | None, str | None], lo: float) -> EloPair:
    return EloPair(
        better=better, worse=worse, better_control=kinds[0], worse_control=kinds[1],
        questions=10, errors=0, win_rate=0.6, elo_gap=lo + 10, elo_gap_lo=lo,
        elo_gap_hi=lo + 20, verdict="separated" if lo > 0 else "not separated: the judges ...",
    )  # fmt: skip


def _check(pairs: list[EloPair]) -> TournamentDiscrimination:
    return TournamentDiscrimination(
        status="checked", controls={"o": "oracle", "r": "random", "s": "shuffled"}, pairs=pairs,
        separated=0, reversed=0, not_separated=0, not_checked=0, resolvable_elo_gap=None,
        resolvable_note="", judge_calls_executed=0,
    )  # fmt: skip


def test_validity_reads_only_pairs_of_two_controls() -> None:
    ok = _check(
        [_pair("o", "r", ("oracle", "random"), 5.0), _pair("a", "s", (None, "shuffled"), -5)]
    )
    v = validity_of(ok)
    assert v.status == "passed" and v.failed_pairs == []  # a real system vs shuffled: a finding
    bad = validity_of(_check([_pair("o", "r", ("oracle", "random"), -5.0)]))
    assert bad.status == "failed" and bad.failed_pairs == ["o > r: not separated"]
    assert validity_of(None).status == "not checked"
    assert validity_of(None, require=True).status == "failed"
    only_real = _check([_pair("a", "s", (None, "shuffled"), 5.0)])
    assert validity_of(only_real).status == "not checked"
    assert validity_of(only_real, require=True).status == "failed"


def test_unknown_baseline_or_candidate_is_one_line_naming_the_known_systems() -> None:
    with pytest.raises(RagcourtError, match=r"gate baseline 'prod' .* \(known: a, b\)"):
        check_names("prod", None, ["a", "b"], "the tournament")
    with pytest.raises(RagcourtError, match=r"gate candidate 'zz' .* \(known: a, b\)"):
        check_names("a", ["zz"], ["a", "b"], "the tournament")
    assert check_names("a", None, ["a", "b", "c"], "t") == ["b", "c"]
    with pytest.raises(RagcourtError, match="margin must be"):
        decide("elo", "a", -1.0, 10, PASSED, [])


HOSTILE = 'evil"<x>&\n</testcase><testcase name="fake"/>\x07'


def test_junit_parses_and_escapes_a_hostile_system_name() -> None:
    rows = [
        (HOSTILE, -80.0, -100.0, -60.0, 40),
        ("ok-system", 5.0, -20.0, 30.0, 40),
        ("fine", 40.0, 10.0, 70.0, 40),
    ]
    result = decide("elo", "base<&>", 0.0, 40, FAILED, rows)
    assert result.exit_code == EXIT_INVALID
    root = ET.fromstring(junit_xml(result).encode("utf-8"))
    assert root.tag == "testsuite" and root.get("tests") == "4"
    assert root.get("failures") == "2" and root.get("errors") == "1"
    cases = root.findall("testcase")
    assert [c.get("name") for c in cases] == [
        "validity",
        'evil"<x>&\n</testcase><testcase name="fake"/>\\x07 vs base<&>',
        "ok-system vs base<&>",
        "fine vs base<&>",
    ]
    failure = cases[1].find("failure")
    assert failure is not None and failure.get("type") == "worse"
    assert cases[2].find("error") is not None  # undecided is not a pass
    assert cases[3].find("failure") is None and cases[3].find("error") is None
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert props["baseline"] == "base<&>" and props["exit_code"] == "3"


def test_printed_lines_keep_one_line_per_candidate() -> None:
    result = decide("elo", "base", 0.0, 40, PASSED, [(HOSTILE, -80.0, -100.0, -60.0, 40)])
    out = lines(result)
    assert len(out) == 2 and all("\n" not in line for line in out)
    assert out[0].endswith("gap -80 [-100, -60] Elo points vs base")
    assert out[1].startswith("gate: exit 1: a candidate is significantly worse")


def test_dafe_view_pairs_questions_both_systems_have_a_verdict_for() -> None:
    import polars as pl

    from ragcourt.tournament.gate import dafe_gate

    rows = []
    for j in range(40):
        rows += [
            {"system": "base", "question_id": f"q{j}", "final_verdict": True},
            {"system": "down", "question_id": f"q{j}", "final_verdict": j % 4 == 0},
            {"system": "same", "question_id": f"q{j}", "final_verdict": j != 3},
            # a failed verdict is left out of both sides, never counted as wrong
            {"system": "gaps", "question_id": f"q{j}", "final_verdict": None if j < 20 else True},
            {"system": "ctl", "question_id": f"q{j}", "final_verdict": False},
        ]
    verdicts = pl.DataFrame(
        rows, schema={"system": pl.String, "question_id": pl.String, "final_verdict": pl.Boolean}
    )
    result = dafe_gate(verdicts, None, "base", 0.05, 500, 0, controls={"ctl": "random"})
    by = {c.candidate: c for c in result.candidates}
    assert set(by) == {"down", "same", "gaps"}  # the control is no candidate
    assert by["down"].gap == pytest.approx(-0.75) and by["down"].verdict == WORSE
    assert by["same"].gap == pytest.approx(-1 / 40)
    assert by["same"].lo is not None and by["same"].lo <= -0.05  # one miss in 40: undecided
    assert by["same"].verdict == UNDECIDED and by["same"].questions_needed is not None
    # 20 shared questions, all correct for both: interval [0, 0], above -0.05 -> not worse
    assert (by["gaps"].gap, by["gaps"].lo, by["gaps"].verdict) == (0.0, 0.0, NOT_WORSE)
    assert result.unit == "accuracy" and result.exit_code == EXIT_WORSE
