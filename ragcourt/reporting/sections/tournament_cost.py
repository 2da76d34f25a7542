"""Report section: what the Swiss tournament saved against an exhaustive round-robin (matches,
judge calls, failed judgements, rankings and their Kendall τ-b), from the tournament summary."""

from __future__ import annotations

from ragcourt.reporting import plots
from ragcourt.reporting.artifacts import Artifacts
from ragcourt.reporting.model import Section, Table, fmt, pct
from ragcourt.reporting.sections.common import note_missing, tau_text


def swiss_cost(art: Artifacts) -> Section:
    """Swiss against round-robin cost and agreement."""
    sec = Section(
        "swiss",
        "Swiss vs round-robin cost",
        "The Swiss tournament pairs systems of similar Elo each round instead of playing every "
        "pair. Kendall τ-b compares its ranking with the exhaustive round-robin's on the same "
        "pairwise judge.",
    )
    s = art.tournament_summary()
    if s is None:
        return note_missing(sec, art, "tournament_summary")
    sw, rr = s.swiss, s.round_robin
    sec.tables.append(
        Table(
            ["", "Swiss", "round-robin"],
            [
                ["rounds", fmt(sw.rounds), "–"],
                ["matches", fmt(sw.matches), fmt(rr.matches)],
                ["judge calls", fmt(sw.judge_calls), fmt(rr.judge_calls)],
                ["failed judgements", fmt(sw.error_judgements), fmt(rr.error_judgements)],
                [
                    "ranking",
                    " > ".join(sw.ranking) or "–",
                    " > ".join(rr.ranking or []) or "–",
                ],
            ],
        )
    )
    sec.facts += [
        ("systems", fmt(s.n_systems)),
        ("matches saved by Swiss", pct(s.swiss_saving)),
        ("Kendall τ-b, Swiss Elo vs round-robin BT", tau_text(s.kendall_swiss_vs_rr)),
        ("Kendall τ-b, Swiss Elo vs round-robin Elo", tau_text(s.kendall_swiss_vs_rr_elo)),
        ("judge calls executed (memoised over both tournaments)", fmt(s.judge_calls_executed)),
        ("judge call unit", s.judge_call_unit),
    ]
    if not rr.enabled:
        sec.notes.append(
            "Round-robin was not run (tournament.round_robin: false); its cost is "
            "the N(N-1)/2 matches it would need."
        )
    sec.figures.append(plots.swiss_vs_round_robin(s))
    return sec
