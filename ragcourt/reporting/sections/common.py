"""Text and lookups several report sections share: intervals as text, Kendall τ, the
unranked leaderboard, systems whose retrieval was not judged, external systems, how
correctness was scored and the grading-fallback caveats."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import polars as pl

from ragcourt.core.provenance import is_external, systems_without_contexts
from ragcourt.judging.retrieval_skips import systems_without_passages
from ragcourt.judging.summaries import JudgeSummary
from ragcourt.reporting.artifacts import Artifacts
from ragcourt.reporting.model import Section, Table, fmt, pct
from ragcourt.tournament.summaries import KendallTau

NO_VALID_JUDGEMENTS_NOTE = (
    "No valid judgements: every pairwise judgement failed (see the tournament's error rows), "
    "so no system is ranked and none is the best."
)


def ci_text(mid: Any, lo: Any, hi: Any) -> str:
    """``mid [lo, hi]``; ``mid`` alone without bounds; "–" without ``mid``."""
    if mid is None:
        return "–"
    if lo is None or hi is None:
        return fmt(mid)
    return f"{fmt(mid)} [{fmt(lo)}, {fmt(hi)}]"


def tau_text(value: KendallTau | None) -> str:
    """Kendall τ-b as "0.667 (p 0.17)"; undefined (a constant ranking, e.g. all systems
    tied) as "undefined (tied ratings)"; "–" when not computed."""
    if value is None:
        return fmt(None)
    if value.tau_b is None:
        return "undefined (tied ratings)"
    p = value.p_value
    return f"{fmt(value.tau_b)} (p {fmt(p)})" if p is not None else fmt(value.tau_b)


def unranked(board: pl.DataFrame) -> bool:
    """A leaderboard without ranks: the tournament had no valid judgement."""
    return bool(board["rank"].is_null().all())


def retrieval_not_judged(art: Artifacts) -> list[str]:
    """Systems whose retrieval was not judged (no passages at all): the judge summary's
    ``retrieval_not_judged``, else the same rule on the answers table."""
    js = art.judge_summary()
    if js is not None and js.retrieval_not_judged:
        return list(js.retrieval_not_judged)
    answers = art.table("answers")
    return systems_without_passages(answers) if answers is not None else []


def external_systems(art: Artifacts) -> tuple[set[str], list[str]]:
    """Systems whose answers came from outside ragcourt (answers file, callable, HTTP), and
    those of them that supplied no contexts."""
    answers = art.table("answers")
    if answers is None:
        return set(), []
    ext = answers.filter(is_external())["system"].unique().to_list()
    return set(ext), systems_without_contexts(answers)


def correctness_source(art: Artifacts) -> str:
    """How per-answer correctness was scored (judge summary): mode and model or judge."""
    js = art.judge_summary()
    if js is None:
        return "–"
    return f"{js.correctness.mode}: {js.correctness.model}"


def grading_fallback_notes(js: JudgeSummary | None) -> list[str]:
    """One caveat per judge column graded partly from floors or fallbacks (judge summary's
    ``grading_fallbacks``): count, share and methods of its rows."""
    notes = []
    for col, f in (js.grading_fallbacks if js is not None else {}).items():
        if f.fallback_rows:
            methods = ", ".join(f"{m} {n}" for m, n in f.methods.items())
            notes.append(
                f"{col}: {fmt(f.fallback_rows)} of {fmt(f.rows)} rows "
                f"({pct(f.share)}) were graded from floors or fallbacks, not exact "
                f"label probabilities ({methods})."
            )
    return notes


def add_row_table(
    sec: Section,
    art: Artifacts,
    name: str,
    columns: list[str],
    cells: Callable[[dict[str, Any]], list[str]],
    caption: str,
    sort_by: tuple[str, ...] = (),
) -> None:
    """Append to ``sec`` a table of ``cells(row)`` per row of the artifact table ``name``
    (sorted by ``sort_by``); nothing when it has no rows, the artifact's note when missing."""
    df = art.table(name)
    if df is None:
        sec.notes += art.note(name)
        return
    if df.height:
        ordered = df.sort(*sort_by) if sort_by else df
        rows = [cells(r) for r in ordered.iter_rows(named=True)]
        sec.tables.append(Table(columns, rows, caption=caption))


def note_missing(sec: Section, art: Artifacts, *names: str) -> Section:
    """``sec`` with a note for each artifact of ``names`` that is missing or unreadable (what a
    section shows in place of what it cannot build)."""
    sec.notes += art.note(*names)
    return sec
