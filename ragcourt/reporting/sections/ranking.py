"""Report section: the leaderboard (Swiss Elo and Bradley-Terry with bootstrap intervals,
DAFE accuracy and mean correctness per system), from ``leaderboard``, ``system_summary`` and
the tournament summary."""

from __future__ import annotations

from typing import Any

from ragcourt.core.provenance import NO_CONTEXTS_SUPPLIED
from ragcourt.judging.retrieval_skips import NO_RETRIEVAL_JUDGING
from ragcourt.reporting.artifacts import Artifacts
from ragcourt.reporting.model import Section, Table, fmt, pct
from ragcourt.reporting.params import ReportingView
from ragcourt.reporting.sections.common import (
    NO_VALID_JUDGEMENTS_NOTE,
    ci_text,
    correctness_source,
    external_systems,
    note_missing,
    retrieval_not_judged,
    unranked,
)

COLUMNS = [
    "rank",
    "system",
    "Swiss Elo [95% CI]",
    "Bradley-Terry [95% CI]",
    "W/T/L",
    "matches",
    "round-robin Elo",
    "DAFE accuracy",
    "mean correctness",
]


def leaderboard(art: Artifacts, params: ReportingView) -> Section:
    """The ranked systems (their plot with CIs is in the headline section)."""
    sec = Section(
        "leaderboard",
        "Leaderboard",
        "Systems ranked by the DICE Swiss tournament (Elo after the Swiss rounds) with 95% "
        "bootstrap confidence intervals over questions, next to a Bradley-Terry fit on every "
        "judged pair. Overlapping intervals mean the data do not separate those systems.",
    )
    board = art.table("leaderboard")
    if board is None:
        return note_missing(sec, art, "leaderboard")
    board = board.sort("rank")
    summ = art.table("system_summary")
    acc: dict[str, tuple[Any, Any]] = {}
    if summ is not None:
        acc = {
            r["system"]: (r["accuracy"], r["correctness_mean"]) for r in summ.iter_rows(named=True)
        }
    else:
        sec.notes += art.note("system_summary")
    external, no_contexts = external_systems(art)
    rows = []
    for r in board.iter_rows(named=True):
        a, c = acc.get(r["system"], (None, None))
        rows.append(
            [
                str(r["rank"]) if r["rank"] is not None else "–",
                r["system"]
                + (" (external)" if r["system"] in external else "")
                + (f" (control: {r['control']})" if r.get("control") else ""),
                ci_text(r["elo"], r["elo_lo"], r["elo_hi"]),
                ci_text(r["bt"], r["bt_lo"], r["bt_hi"]),
                f"{r['wins']}/{r['ties']}/{r['losses']}",
                fmt(r["matches"]),
                fmt(r.get("elo_rr")),
                pct(a),
                fmt(c),
            ]
        )
    sec.tables.append(Table(COLUMNS, rows))
    if unranked(board):
        sec.notes.insert(0, NO_VALID_JUDGEMENTS_NOTE)
    not_judged = retrieval_not_judged(art)
    if not_judged:
        named = ", ".join(
            f"{s} ({NO_CONTEXTS_SUPPLIED})" if s in no_contexts else s for s in not_judged
        )
        sec.notes.append(
            f"{named}: {NO_RETRIEVAL_JUDGING} - their passage relevance, UDCG and retrieval "
            "metrics are not available (not zero)."
        )
    summary = art.tournament_summary()
    if summary is not None:
        sec.facts += [
            ("pairwise judge", summary.judge),
            ("correctness from", correctness_source(art)),
            ("questions per match", fmt(summary.n_questions)),
            ("bootstrap replicates", fmt(summary.bootstrap.replicates)),
        ]
    return sec
