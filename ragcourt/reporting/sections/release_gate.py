"""Report section: the release gate against ``gate.baseline`` (when set), from the tournament
summary's Elo gaps (:mod:`ragcourt.tournament.gate`): each real system's verdict, gap and
interval, the validity check it rests on and the exit code ``ragcourt gate`` gives."""

from __future__ import annotations

from ragcourt.core.errors import RagcourtError
from ragcourt.reporting.artifacts import Artifacts
from ragcourt.reporting.model import Section, Table, fmt
from ragcourt.reporting.params import ReportingView
from ragcourt.reporting.sections.common import ci_text, note_missing
from ragcourt.tournament.gate import EXIT_PASS, GateResult, elo_gate

GATE_INTRO = (
    "Is a candidate significantly worse than the system in production? A candidate is worse "
    "when the upper bound of the 95% bootstrap interval of its Elo gap to the baseline is below "
    "−margin, undecided when the interval holds −margin (not enough questions: the estimate "
    "assumes the interval narrows as 1/√questions), and not worse otherwise (better when the "
    "lower bound is above 0). `ragcourt gate` exits 3 when the controls are not separated, "
    "else 1 when a candidate is worse, else 4 when one is undecided, else 0."
)


def _table(result: GateResult) -> Table:
    rows = [
        [
            c.candidate,
            c.verdict,
            ci_text(c.gap, c.lo, c.hi),
            fmt(c.questions_needed),
            c.note or "–",
        ]
        for c in result.candidates
    ]
    return Table(
        ["candidate", "verdict", "Elo gap to baseline [95% CI]", "questions needed", "note"],
        rows,
        f"Each real system against {result.baseline}; margin {fmt(result.margin)} Elo points",
    )


def release_gate(art: Artifacts, params: ReportingView) -> Section:
    """The gate's verdicts per candidate and its exit code (``gate.baseline`` must be set)."""
    baseline = params.gate.baseline or ""
    sec = Section("gate", "Release gate: is a candidate worse than the baseline?", GATE_INTRO)
    summary = art.tournament_summary()
    if summary is None:
        return note_missing(sec, art, "tournament_summary")
    try:
        result = elo_gate(
            summary, baseline, params.gate.margin, require_validity=params.gate.require_validity
        )
    except RagcourtError as err:
        sec.notes.append(f"gate not evaluated: {err}")
        return sec
    sec.facts += [
        ("baseline", result.baseline),
        ("margin", f"{fmt(result.margin)} {result.unit}"),
        ("questions", fmt(result.n_questions)),
        ("validity check", f"{result.validity.status}: {result.validity.detail}"),
        ("decision", f"exit {result.exit_code}: {result.decision}"),
    ]
    sec.tables.append(_table(result))
    if result.validity.failed_pairs:
        sec.notes.append("controls not separated: " + "; ".join(result.validity.failed_pairs))
    if result.exit_code != EXIT_PASS and result.view == "elo":
        sec.notes.append(result.method_note)
    return sec
