"""Report section: DAFE judging (two primary judges, an arbitrator only on disagreement):
agreement, arbitration and judge calls saved, from the judge summary's ``dafe`` section."""

from __future__ import annotations

from ragcourt.reporting import plots
from ragcourt.reporting.artifacts import Artifacts
from ragcourt.reporting.model import Section, Table, fmt, pct
from ragcourt.reporting.sections.common import note_missing


def dafe(art: Artifacts) -> Section:
    """DAFE agreement and arbitration (also published as a Prefect artifact)."""
    sec = Section(
        "dafe",
        "DAFE judging: agreement and arbitration",
        "Two primary judges give a verdict on each (system, question); the arbitrator is called "
        "only when they disagree and the final verdict is the majority of three.",
    )
    js = art.judge_summary()
    if js is None:
        return note_missing(sec, art, "judge_summary")
    d = js.dafe
    sec.facts += [
        ("primary judges", ", ".join(d.primaries) or "–"),
        ("arbitrator", d.arbitrator),
        ("answers judged", fmt(d.items)),
        ("final verdicts", fmt(d.final_verdicts)),
        ("error rows (no verdict)", fmt(d.error_rows)),
        ("disagreement rate", pct(d.disagreement_rate)),
        ("arbitrator calls", fmt(d.arbitrator_calls)),
        (
            "judge calls (DAFE / always three)",
            f"{fmt(d.judge_calls)} / {fmt(d.judge_calls_always_three)}",
        ),
        (
            "judge calls saved",
            f"{fmt(d.judge_calls_saved)} ({pct(d.judge_calls_saved_fraction)})",
        ),
        (
            "LLM judge calls (DAFE / always three)",
            f"{fmt(d.llm_judge_calls)} / {fmt(d.llm_judge_calls_always_three)}",
        ),
    ]
    if d.per_judge:
        sec.tables.append(
            Table(
                ["judge", "verdicts", "agreement with final"],
                [[j, fmt(v.n), pct(v.agreement_with_final)] for j, v in d.per_judge.items()],
                "Each judge's agreement with the final DAFE verdict",
            )
        )
    acc = js.accuracy_per_system
    if acc:
        sec.tables.append(
            Table(
                ["system", "DAFE accuracy"],
                [[s, pct(v)] for s, v in sorted(acc.items(), key=lambda kv: -(kv[1] or 0))],
            )
        )
    sec.figures.append(plots.dafe(d))
    return sec
