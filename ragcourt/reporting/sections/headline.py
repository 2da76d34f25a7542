"""Report section: the headline, first in the report - the best system and whether it is
significantly better than the runner-up, which gaps are resolved and how many questions would
resolve the rest, the discrimination verdict and judge agreement, with the leaderboard and
Elo-gap plots. Its figures are :class:`~ragcourt.reporting.headline.Headline`'s."""

from __future__ import annotations

from ragcourt.reporting import plots
from ragcourt.reporting.artifacts import Artifacts
from ragcourt.reporting.headline import (
    VERDICT_NOT_AVAILABLE,
    VERDICT_NOT_CHECKED,
    VERDICT_SEPARATED,
    Headline,
    headline,
)
from ragcourt.reporting.model import Lead, Section, Table, fmt, pct
from ragcourt.reporting.params import ReportingView
from ragcourt.reporting.sections.common import note_missing
from ragcourt.tournament.gaps import METHOD_NOTE, EloGap, EloGaps

INTRO = (
    "The answer in four lines. Elo gaps are Swiss Elo differences between real systems "
    "(controls excluded) with 95% bootstrap intervals over questions; a gap is resolved when "
    "its interval excludes 0."
)


def elo(value: float | None) -> str:
    """An Elo figure to one decimal ("–" for None)."""
    return "–" if value is None else f"{value:.1f}"


def gap_text(gap: float | None, lo: float | None, hi: float | None) -> str:
    """``12.3 [-4.0, 30.1]``; the gap alone without an interval."""
    if lo is None or hi is None:
        return elo(gap)
    return f"{elo(gap)} [{elo(lo)}, {elo(hi)}]"


def _best_lead(h: Headline) -> Lead:
    if h.best_system is None:
        return Lead("No real system is ranked: see the leaderboard and validity notes.", "bad")
    if h.runner_up is None:
        return Lead(f"Best system: {h.best_system} (the only ranked real system).")
    ahead = (
        f"Best system: {h.best_system}, ahead of the runner-up {h.runner_up} by "
        f"{elo(h.elo_gap)} Elo"
    )
    if h.significant is None:
        return Lead(f"{ahead}; no bootstrap interval for the gap (bootstrap off or an old run).")
    ci = f" (95% CI {elo(h.elo_gap_lo)} to {elo(h.elo_gap_hi)})"
    if h.significant:
        return Lead(f"{ahead}{ci}: significantly better, the interval excludes 0.", "good")
    return Lead(f"{ahead}{ci}: not significantly better, the interval includes 0.", "warn")


def _resolved_lead(h: Headline) -> Lead | None:
    if h.neighbour_gaps is None or not h.neighbour_gaps:
        return None
    done, total = h.neighbour_gaps_resolved or 0, h.neighbour_gaps
    text = (
        f"{done} of {total} gaps between neighbours in the ranking are resolved at "
        f"{fmt(h.questions)} questions"
    )
    if h.real_pairs:
        text += f" ({h.real_pairs_resolved or 0} of {h.real_pairs} pairs of real systems)"
    if done == total:
        return Lead(text + ".", "good")
    if h.questions_to_resolve is None:
        return Lead(text + "; the rest are ties that more questions would not resolve.", "warn")
    return Lead(
        f"{text}; resolving the rest would take about {fmt(h.questions_to_resolve)} questions "
        "(estimate: the interval narrows as 1/sqrt(questions), the gaps stay the same).",
        "warn",
    )


def _validity_lead(h: Headline) -> Lead:
    if h.discrimination == VERDICT_SEPARATED:
        return Lead(
            "Discrimination check: separated - the judges rank every known-better control "
            f"above the worse one ({h.discrimination_detail}).",
            "good",
        )
    if h.discrimination in (VERDICT_NOT_CHECKED, VERDICT_NOT_AVAILABLE):
        return Lead(
            f"Discrimination check: {h.discrimination} ({h.discrimination_detail}); nothing "
            "shows the judges can tell better from worse on this data.",
            "warn",
        )
    return Lead(
        f"Discrimination check: {h.discrimination.upper()} ({h.discrimination_detail}): the "
        "judges do not order the controls of known quality, so the ranking of real systems "
        "is not evidence of a difference.",
        "bad",
    )


def _agreement_lead(h: Headline) -> Lead:
    dafe = (
        f"the two primary DAFE judges disagree on {pct(h.dafe_disagreement_rate)} of answers"
        if h.dafe_disagreement_rate is not None
        else "no DAFE disagreement rate (judge summary missing)"
    )
    return Lead(f"Judge agreement: {dafe}; human labels (PPI): {h.ppi}.")


def _gap_rows(gaps: list[EloGap]) -> list[list[str]]:
    def status(g: EloGap) -> str:
        if g.resolved is None:
            return "no interval"
        return "resolved" if g.resolved else "not resolved"

    return [
        [
            g.better,
            g.worse,
            gap_text(g.elo_gap, g.elo_gap_lo, g.elo_gap_hi),
            status(g),
            fmt(g.questions_to_resolve) if g.resolved is False else "–",
        ]
        for g in gaps
    ]


def _facts(h: Headline) -> list[tuple[str, str]]:
    yield_text = (
        f"{fmt(h.qa_accepted)} accepted ({pct(h.qa_yield)} of attempts)"
        if h.qa_yield is not None
        else f"{fmt(h.qa_accepted)} questions (bring-your-own file)"
        if h.qa_accepted is not None
        else "–"
    )
    return [
        ("best system", h.best_system or "–"),
        ("runner-up", h.runner_up or "–"),
        ("Elo gap to runner-up [95% CI]", gap_text(h.elo_gap, h.elo_gap_lo, h.elo_gap_hi)),
        ("significantly better", fmt(h.significant)),
        ("discrimination", h.discrimination),
        ("DAFE disagreement rate", pct(h.dafe_disagreement_rate)),
        ("PPI", h.ppi),
        ("QA yield", yield_text),
        ("model calls (cache hits)", f"{fmt(h.model_calls)} ({fmt(h.cache_hits)})"),
    ]


def headline_section(art: Artifacts, params: ReportingView, h: Headline | None = None) -> Section:
    """The headline (``h``, else computed from ``art``), first in the report."""
    h = h if h is not None else headline(art)
    sec = Section("headline", "Headline", INTRO)
    leads = [_best_lead(h), _resolved_lead(h), _validity_lead(h), _agreement_lead(h)]
    sec.lead = [x for x in leads if x is not None]
    sec.facts = _facts(h)
    ts = art.tournament_summary()
    gaps: EloGaps | None = ts.elo_gaps if ts is not None else None
    if gaps is not None and gaps.adjacent():
        sec.tables.append(
            Table(
                ["higher", "lower", "Elo gap [95% CI]", "status", "questions to resolve"],
                _gap_rows(gaps.adjacent()),
                f"Gaps between neighbours in the ranking of real systems ({METHOD_NOTE})",
            )
        )
    elif ts is not None and h.runner_up is not None:
        sec.notes.append(
            "The tournament summary has no gap intervals (written before they existed): "
            "re-run the tournament stage (`dvc repro tournament`)."
        )
    board = art.table("leaderboard")
    if board is not None:
        sec.figures.append(plots.leaderboard(board.sort("rank"), params.tournament.initial_elo))
    if gaps is not None and len(gaps.systems) > 1:
        sec.figures.append(plots.elo_gap_matrix(gaps))
    return note_missing(sec, art, "tournament_summary", "leaderboard")
