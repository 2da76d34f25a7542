"""The report opens, after the headline (which gives the verdict), with the discrimination
check: separated and not-separated pairs with their intervals, and "no controls" when none
were configured."""

from __future__ import annotations

import json
from pathlib import Path

from _report_data import write_artifacts

from ragcourt.judging.discrimination import (
    NOT_SEPARATED,
    SEPARATED,
    DafeDiscrimination,
    DafePair,
)
from ragcourt.orchestration.params import Params
from ragcourt.reporting.stage import build
from ragcourt.tournament.discrimination import EloPair, TournamentDiscrimination

PARAMS = Params.model_validate(
    {"chunkings": {"c256": {"size": 256, "overlap": 32}}, "qagen": {"reference_chunking": "c256"}}
)


def _add(root: Path, rel: str, check: dict[str, object]) -> None:
    path = root / rel
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "discrimination": check}))


def _tournament_check() -> dict[str, object]:
    pairs = [
        EloPair(better="control-oracle", worse="control-random", better_control="oracle",
                worse_control="random", questions=6, errors=0, win_rate=0.917, elo_gap=41.5,
                elo_gap_lo=12.25, elo_gap_hi=60.0, verdict=SEPARATED),
        EloPair(better="dense-k5", worse="control-shuffled", better_control=None,
                worse_control="shuffled", questions=6, errors=0, win_rate=0.5, elo_gap=3.0,
                elo_gap_lo=-20.5, elo_gap_hi=25.0, verdict=NOT_SEPARATED),
    ]  # fmt: skip
    return TournamentDiscrimination(
        status="checked", controls={"control-oracle": "oracle"}, pairs=pairs, separated=1,
        reversed=0, not_separated=1, not_checked=0, resolvable_elo_gap=27.75,
        resolvable_note="median half-width", judge_calls_executed=0,
    ).model_dump(mode="json")  # fmt: skip


def _dafe_check() -> dict[str, object]:
    pair = DafePair(better="control-oracle", worse="control-shuffled", better_control="oracle",
                    worse_control="shuffled", questions=6, accuracy_better=0.833,
                    accuracy_worse=0.0, difference=0.833, difference_lo=0.5, difference_hi=1.0,
                    verdict=SEPARATED)  # fmt: skip
    return DafeDiscrimination(
        status="checked", controls={}, pairs=[pair], separated=1, reversed=0, not_separated=0,
        not_checked=0, bootstrap=1000, seed=0, level=0.95, note="accuracy difference",
    ).model_dump(mode="json")  # fmt: skip


def test_report_opens_with_the_discrimination_check(tmp_path: Path) -> None:
    write_artifacts(tmp_path)
    _add(tmp_path, "data/tournament/summary.json", _tournament_check())
    _add(tmp_path, "data/judge/summary.json", _dafe_check())
    html, md, sections = build(PARAMS, tmp_path)
    assert [s.key for s in sections[:2]] == ["headline", "validity"]
    head = md.split("\n## ")[1]
    # the control pair is separated; the real system not above shuffled answers is a finding
    assert (
        "**Discrimination check: separated - the judges rank every known-better control above "
        "the worse one (tournament: control pairs 1 of 1 separated, systems above shuffled "
        "answers 0 of 1 separated (1 not separated); DAFE: control pairs 1 of 1 separated; "
        "not above shuffled answers (tournament): dense-k5)" in head
    )
    first = md.split("\n## ")[2]
    assert first.startswith("Validity: do the judges separate known-better systems?")
    assert "1 of 2 known pairs separated, 0 reversed, 1 not separated" in first
    assert "smallest resolvable Elo gap" in first and "27.750" in first
    assert (
        "| control-oracle (control: oracle) | control-random (control: random) | 91.7% |" in first
    )
    assert r"41.500 \[12.250, 60.000\] | separated |" in first
    assert r"3.000 \[-20.500, 25.000\] | not separated: the judges cannot tell" in first
    assert r"| 83.3% | 0.0% | 0.833 \[0.500, 1.000\] | separated |" in first
    assert "pair(s) of two controls not separated" not in first  # the control pair is
    assert "not separated from shuffled answers: dense-k5 (these systems answer" in first
    assert "<h2>Validity: do the judges separate known-better systems?</h2>" in html


def test_report_says_no_controls_when_none_were_configured(tmp_path: Path) -> None:
    write_artifacts(tmp_path)
    none = TournamentDiscrimination(
        status="no controls: validity not checked", controls={}, pairs=[], separated=0,
        reversed=0, not_separated=0, not_checked=0, resolvable_elo_gap=12.0,
        resolvable_note="x", judge_calls_executed=0,
    ).model_dump(mode="json")  # fmt: skip
    _add(tmp_path, "data/tournament/summary.json", none)
    _html, md, _ = build(PARAMS, tmp_path)
    assert "**Discrimination check: not checked (no control systems" in md.split("\n## ")[1]
    first = md.split("\n## ")[2]
    assert "tournament (Swiss Elo)" in first and "no controls: validity not checked" in first
    # the demo's judge summary (no controls) says so too, rather than omitting the check
    assert "**DAFE accuracy**: no controls: validity not checked" in first


def test_a_control_pair_not_separated_is_a_warning_on_the_whole_ranking(tmp_path: Path) -> None:
    write_artifacts(tmp_path)
    check = _tournament_check()
    pairs = check["pairs"]
    assert isinstance(pairs, list)
    pairs[0] = {**pairs[0], "elo_gap_lo": -5.0, "verdict": NOT_SEPARATED}
    _add(tmp_path, "data/tournament/summary.json", {**check, "pairs": pairs})
    _, md, _ = build(PARAMS, tmp_path)
    assert "**Discrimination check: NOT SEPARATED (tournament: control pairs 0 of 1" in md
    assert "1 pair(s) of two controls not separated or reversed: treat the ranking" in md
