"""Human labels matched to the current data (the ``calibrate`` stage's first step).

A label of an answer (or passage) whose text changed since it was labelled is **stale**;
items whose labellers disagree are **conflicts**; "can't tell" answers carry no verdict. None
of them is used, and all are counted (:class:`~ragcourt.calibration.summaries.LabelCounts`)
and named in the summary's warnings. Human answer labels become ``y`` = 1 (correct) / 0.
"""

from __future__ import annotations

import polars as pl

from ragcourt.calibration.sampling import answer_population, passage_population
from ragcourt.calibration.summaries import LabelCounts


def match_labels(
    labels: pl.DataFrame, population: pl.DataFrame
) -> tuple[pl.DataFrame, LabelCounts]:
    """Labels of one kind matched to current items: usable rows and the counts."""
    counts = LabelCounts(labeled=labels.height)
    if labels.height == 0:
        return labels, counts
    cur = population.select("item_id", pl.col("content_sha").alias("_current_sha"))
    m = labels.join(cur, on="item_id", how="left")
    stale = m["_current_sha"].is_null() | (m["_current_sha"] != m["content_sha"])
    m = m.with_columns(stale.alias("_stale"))
    counts.stale = int(m["_stale"].sum())
    fresh = m.filter(~pl.col("_stale"))
    counts.conflicting = int(fresh["conflict"].sum())
    fresh = fresh.filter(~pl.col("conflict"))
    counts.cant_tell = int((fresh["value"] == "cant_tell").sum())
    usable = fresh.filter(pl.col("value") != "cant_tell").drop("_current_sha", "_stale")
    counts.usable = usable.height
    return usable, counts


def answer_labels(
    resolved: pl.DataFrame,
    qa: pl.DataFrame,
    answers: pl.DataFrame,
    verdicts: pl.DataFrame,
    correctness: pl.DataFrame,
    correctness_threshold: float,
) -> tuple[pl.DataFrame, LabelCounts]:
    """Usable answer labels as ``(system, question_id, y)`` and their counts."""
    population = answer_population(qa, answers, verdicts, correctness, correctness_threshold)
    usable, counts = match_labels(resolved.filter(pl.col("kind") == "answer"), population)
    y = (pl.col("value") == "correct").cast(pl.Float64).alias("y")
    return usable.select("system", "question_id", y), counts


def passage_labels(
    resolved: pl.DataFrame,
    qa: pl.DataFrame,
    answers: pl.DataFrame,
    relevance: pl.DataFrame | None,
) -> tuple[pl.DataFrame, LabelCounts, list[str]]:
    """Usable passage labels, their counts and a warning when there is no relevance table
    to match them against (then none is used)."""
    labels = resolved.filter(pl.col("kind") == "passage")
    if relevance is not None:
        usable, counts = match_labels(labels, passage_population(qa, answers, relevance))
        return usable, counts, []
    warnings = []
    if labels.height:
        warnings.append(f"{labels.height} passage label(s) but no relevance table: not used")
    return labels.clear(), LabelCounts(labeled=labels.height), warnings


def label_warnings(answers: LabelCounts, passages: LabelCounts) -> list[str]:
    """One warning per kind with stale labels, and one per kind with conflicting labels."""
    warnings = []
    for what, c in (("answer", answers), ("passage", passages)):
        if c.stale:
            warnings.append(
                f"{c.stale} {what} label(s) are stale (the item changed or is gone since it "
                "was labelled) and are not used; label the current sample again"
            )
        if c.conflicting:
            warnings.append(f"{c.conflicting} {what} item(s) have conflicting labels: not used")
    return warnings
