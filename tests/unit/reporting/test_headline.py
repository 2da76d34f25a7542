"""The report's headline on scripted summaries: a significant lead, a lead the interval does
not resolve (with the questions that would), and controls the judges do not separate."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _report_data import discrimination, elo_gaps, write_artifacts

from ragcourt.judging.discrimination import NOT_SEPARATED, REVERSED, SEPARATED
from ragcourt.orchestration.params import Params
from ragcourt.reporting.artifacts import Artifacts
from ragcourt.reporting.headline import Headline, headline
from ragcourt.reporting.model import Section
from ragcourt.reporting.sections.headline import headline_section
from ragcourt.reporting.stage import render


def _headline(root: Path, **tournament: Any) -> tuple[Headline, Section, str]:
    write_artifacts(root, tournament=tournament)
    art = Artifacts(root)
    head = headline(art)
    sec = headline_section(art, Params(), head)
    _, md = render([sec], root, generated="now")
    return head, sec, md


def test_significant_lead_over_the_runner_up(tmp_path: Path) -> None:
    head, sec, md = _headline(tmp_path)
    assert (head.best_system, head.runner_up) == ("dense-k5", "bm25-k5")
    assert (head.elo_gap, head.elo_gap_lo, head.elo_gap_hi) == (61.5, 12.0, 111.0)
    assert head.significant is True and head.questions == 3
    # bm25-k5 vs dense-k1 is not resolved: 3 * (66.5 / 61.5)^2 = 3.5 -> 4 questions
    assert (head.neighbour_gaps, head.neighbour_gaps_resolved) == (2, 1)
    assert head.questions_to_resolve == 4
    assert head.discrimination == "not checked"  # the fixture run has no controls
    assert head.dafe_disagreement_rate == pytest.approx(1 / 9)
    assert head.ppi == "not calibrated: no human labels" and head.human_labels == 0
    assert head.qa_accepted == 3 and head.qa_yield == pytest.approx(3 / 7)
    assert (head.model_calls, head.cache_hits) == (5, 4)
    best = sec.lead[0]
    assert best.tone == "good"
    assert best.text == (
        "Best system: dense-k5, ahead of the runner-up bm25-k5 by 61.5 Elo "
        "(95% CI 12.0 to 111.0): significantly better, the interval excludes 0."
    )
    assert sec.lead[1].text.startswith("1 of 2 gaps between neighbours in the ranking are ")
    assert "about 4 questions (estimate" in sec.lead[1].text
    assert sec.lead[2].tone == "warn" and "no control systems" in sec.lead[2].text
    assert "disagree on 11.1% of answers" in sec.lead[3].text
    assert [f.name for f in sec.figures] == ["leaderboard", "elo_gaps"]
    assert sec.tables[0].rows == [
        ["dense-k5", "bm25-k5", "61.5 [12.0, 111.0]", "resolved", "–"],
        ["bm25-k5", "dense-k1", "61.5 [-5.0, 128.0]", "not resolved", "4"],
    ]
    assert "**Best system: dense-k5, ahead of the runner-up bm25-k5" in md


def test_lead_the_interval_does_not_resolve(tmp_path: Path) -> None:
    head, sec, md = _headline(tmp_path, elo_gaps=elo_gaps(head=(-20.0, 140.0)))
    assert head.significant is False
    # both neighbour gaps unresolved: the larger need, 3 * (80 / 61.5)^2 = 5.08 -> 6
    assert (head.neighbour_gaps_resolved, head.questions_to_resolve) == (0, 6)
    best = sec.lead[0]
    assert best.tone == "warn"
    assert best.text.endswith(
        "(95% CI -20.0 to 140.0): not significantly better, the interval includes 0."
    )
    assert "0 of 2 gaps" in sec.lead[1].text and "about 6 questions" in sec.lead[1].text
    assert "questions to resolve: estimate assuming" in sec.tables[0].caption
    assert "not significantly better" in md


@pytest.mark.parametrize(
    ("verdict", "expected", "tone"),
    [
        (NOT_SEPARATED, "not separated", "bad"),
        (REVERSED, "reversed", "bad"),
        (SEPARATED, "separated", "good"),
    ],
)
def test_discrimination_verdict_of_the_control_pairs(
    tmp_path: Path, verdict: str, expected: str, tone: str
) -> None:
    head, sec, _ = _headline(tmp_path, discrimination=discrimination(verdict))
    assert head.discrimination == expected
    lead = sec.lead[2]
    assert lead.tone == tone
    if expected == "not separated":
        assert head.discrimination_detail == (
            "tournament: control pairs 0 of 1 separated (1 not separated)"
        )
        assert lead.text.startswith("Discrimination check: NOT SEPARATED (tournament: control")
        assert "the ranking of real systems is not evidence of a difference" in lead.text


def test_summary_without_gap_intervals_still_names_the_best(tmp_path: Path) -> None:
    head, sec, _ = _headline(tmp_path, elo_gaps=None)
    assert (head.best_system, head.runner_up, head.elo_gap) == ("dense-k5", "bm25-k5", 61.5)
    assert head.significant is None and head.neighbour_gaps is None
    assert "no bootstrap interval for the gap" in sec.lead[0].text
    assert any("re-run the tournament stage" in n for n in sec.notes)
    assert [f.name for f in sec.figures] == ["leaderboard"]


def test_no_artifacts_is_a_headline_of_notes(tmp_path: Path) -> None:
    art = Artifacts(tmp_path)
    head = headline(art)
    assert head.best_system is None and head.discrimination == "not available"
    sec = headline_section(art, Params(), head)
    assert sec.lead[0].tone == "bad" and not sec.figures
    assert any("leaderboard.parquet is missing" in n for n in sec.notes)


def test_a_real_system_not_above_shuffled_answers_is_a_finding_not_a_failed_check(
    tmp_path: Path,
) -> None:
    check = discrimination(SEPARATED)  # oracle > random, separated
    weak = {
        **check["pairs"][0],
        "better": "dense-k1",
        "worse": "shuffled",
        "better_control": None,
        "worse_control": "shuffled",
        "elo_gap_lo": -10.0,
        "verdict": NOT_SEPARATED,
    }
    check = {**check, "pairs": [check["pairs"][0], weak], "not_separated": 1}
    check["controls"] = {**check["controls"], "shuffled": "shuffled"}
    head, sec, _ = _headline(tmp_path, discrimination=check)
    assert head.discrimination == "separated"
    assert head.discrimination_detail == (
        "tournament: control pairs 1 of 1 separated, systems above shuffled answers 0 of 1 "
        "separated (1 not separated); not above shuffled answers (tournament): dense-k1"
    )
    assert sec.lead[2].tone == "good"
    # the same pair reversed between two controls fails the check
    bad = {**check["pairs"][0], "elo_gap_hi": -1.0, "elo_gap_lo": -9.0, "verdict": REVERSED}
    head, _, _ = _headline(tmp_path / "r", discrimination={**check, "pairs": [bad, weak]})
    assert head.discrimination == "reversed"
