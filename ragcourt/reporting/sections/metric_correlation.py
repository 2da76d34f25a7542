"""Report section: which retrieval metric predicts correct answers? Spearman and Kendall τ-b
of each metric with answer correctness over (system, question) pairs, from
``metric_correlation`` (the UDCG paper's table, on the run's data)."""

from __future__ import annotations

import polars as pl

from ragcourt.judging.retrieval_skips import NO_RETRIEVAL_JUDGING
from ragcourt.reporting import plots
from ragcourt.reporting.artifacts import Artifacts
from ragcourt.reporting.model import Section, Table
from ragcourt.reporting.sections.common import (
    correctness_source,
    grading_fallback_notes,
    note_missing,
    retrieval_not_judged,
)


def udcg_correlation(art: Artifacts) -> Section:
    """Correlations against ``correctness`` (every target when there are none)."""
    sec = Section(
        "udcg",
        "Which retrieval metric predicts correct answers?",
        "Spearman and Kendall τ-b correlation, over (system, question) pairs, of each retrieval "
        "metric with the end-to-end answer correctness (the UDCG paper's table, on your data). "
        "SE = sqrt((1 + ρ²/2)/(n − 3)).",
    )
    sec.facts.append(("correctness from", correctness_source(art)))
    not_judged = retrieval_not_judged(art)
    if not_judged:
        sec.facts.append(("no retrieval judging", ", ".join(not_judged)))
        sec.notes.append(
            f"{', '.join(not_judged)}: {NO_RETRIEVAL_JUDGING}; their (system, question) pairs "
            "are not in these correlations."
        )
    sec.notes += grading_fallback_notes(art.judge_summary())
    corr = art.table("metric_correlation")
    if corr is None:
        return note_missing(sec, art, "metric_correlation")
    target = corr.filter(pl.col("target") == "correctness")
    if target.is_empty():
        target = corr
        sec.notes.append("No correlations against 'correctness'; showing every target.")
    sec.tables.append(
        Table.from_frame(
            target.sort("spearman", descending=True, nulls_last=True).select(
                "label", "target", "n", "spearman", "spearman_se", "kendall_tau_b", "kendall_se"
            )
        )
    )
    if target["spearman"].drop_nulls().len():
        sec.figures.append(plots.metric_correlation(target))
    else:
        sec.notes.append("Every correlation is undefined (constant scores or too few pairs).")
    return sec
