"""Report section: do the judges separate the control pairs of known order? (first in the
report). Reads the ``discrimination`` checks of the tournament and judge summaries."""

from __future__ import annotations

from ragcourt.core.control_kinds import is_control_pair
from ragcourt.judging.discrimination import DafeDiscrimination, DafePair
from ragcourt.reporting.artifacts import Artifacts
from ragcourt.reporting.model import Section, Table, fmt, pct
from ragcourt.reporting.sections.common import ci_text, note_missing
from ragcourt.tournament.discrimination import EloPair, TournamentDiscrimination

VALIDITY_INTRO = (
    "Control systems of known quality check whether the judges can rank at all: the oracle "
    "(the chunks holding the answer's span) must beat random passages, closed book and shuffled "
    "answers (another question's answer), and every real system should beat shuffled answers "
    "(one that does not answers no better than chance). A pair is separated "
    "when the 95% bootstrap interval of its Elo gap (tournament) or accuracy difference (DAFE) "
    "excludes 0 in the expected direction. If the controls are not separated, the ranking of "
    "real systems is not evidence of a difference."
)


def _check_facts(
    name: str, check: TournamentDiscrimination | DafeDiscrimination | None
) -> list[tuple[str, str]]:
    if check is None:
        return [(name, "not in summary.json (written before the check existed): re-run it")]
    if check.status != "checked":
        return [(name, check.status)]
    text = (
        f"{check.separated} of {len(check.pairs)} known pairs separated, "
        f"{check.reversed} reversed, {check.not_separated} not separated"
    )
    return [(name, text)]


def _known_pair(p: EloPair | DafePair) -> list[str]:
    def one(system: str, kind: str | None) -> str:
        return f"{system} (control: {kind})" if kind else system

    return [one(p.better, p.better_control), one(p.worse, p.worse_control)]


def _tournament_table(check: TournamentDiscrimination) -> Table:
    rows = [
        [
            *_known_pair(p),
            pct(p.win_rate),
            ci_text(p.elo_gap, p.elo_gap_lo, p.elo_gap_hi),
            p.verdict,
        ]
        for p in check.pairs
    ]
    return Table(
        ["better", "worse", "judged win rate", "Elo gap [95% CI]", "verdict"],
        rows,
        f"Tournament: pairs of known order ({check.resolvable_note})",
    )


def _dafe_table(check: DafeDiscrimination) -> Table:
    rows = [
        [
            *_known_pair(p),
            fmt(p.questions),
            pct(p.accuracy_better),
            pct(p.accuracy_worse),
            ci_text(p.difference, p.difference_lo, p.difference_hi),
            p.verdict,
        ]
        for p in check.pairs
    ]
    columns = [
        "better",
        "worse",
        "questions",
        "accuracy (better)",
        "accuracy (worse)",
        "difference [95% CI]",
        "verdict",
    ]
    return Table(columns, rows, f"DAFE: accuracy on the same questions ({check.note})")


def validity(art: Artifacts) -> Section:
    """The discrimination check of the tournament and of DAFE, first in the report."""
    sec = Section("validity", "Validity: do the judges separate known-better systems?")
    sec.intro = VALIDITY_INTRO
    ts, js = art.tournament_summary(), art.judge_summary()
    if ts is None and js is None:
        return note_missing(sec, art, "tournament_summary", "judge_summary")
    t_check = ts.discrimination if ts is not None else None
    d_check = js.discrimination if js is not None else None
    if ts is not None:
        sec.facts += _check_facts("tournament (Swiss Elo)", t_check)
    if js is not None:
        sec.facts += _check_facts("DAFE accuracy", d_check)
    if t_check is not None and t_check.status == "checked":
        sec.facts.append(("smallest resolvable Elo gap", fmt(t_check.resolvable_elo_gap)))
        sec.tables.append(_tournament_table(t_check))
    if d_check is not None and d_check.status == "checked":
        sec.tables.append(_dafe_table(d_check))
    pairs: list[EloPair | DafePair] = [
        *(t_check.pairs if t_check is not None else []),
        *(d_check.pairs if d_check is not None else []),
    ]
    bad = [p for p in pairs if p.verdict != "separated"]
    if control_bad := [p for p in bad if is_control_pair(p.better_control, p.worse_control)]:
        sec.notes.append(
            f"{len(control_bad)} pair(s) of two controls not separated or reversed: treat the "
            "ranking of real systems with gaps below these as noise."
        )
    if weak := sorted({p.better for p in bad if p.better_control is None}):
        sec.notes.append(
            f"not separated from shuffled answers: {', '.join(weak)} (these systems answer "
            "no better than another question's answer, by this judge)"
        )
    return sec
