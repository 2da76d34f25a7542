"""Loud failure: a stage whose failed rows exceed the policy exits non-zero after writing.

A table's failed rows are those whose ``error`` column is set (call errors, unparsable
replies). :func:`assess` counts them overall and per group (``system``); the stage is failed
when ``failed / rows > failure.max_error_rate`` or, with ``failure.fail_on_system``, when every
row of one group failed (and it has at least one row). :func:`enforce` logs every table's
count (WARNING when any row failed) and raises :class:`StageFailed` with one line naming the
stage, table, counts and the most common error - after the stage wrote its outputs, so the
error rows are there to read (:func:`ragcourt.core.io.output_set` commits on StageFailed).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import polars as pl

from ragcourt.core.errors import StageFailed
from ragcourt.core.params import FailureParams

log = logging.getLogger("ragcourt.failures")


@dataclass(frozen=True)
class TableFailures:
    """Failed-row counts of one output table: overall, per group, and the top reasons."""

    table: str
    rows: int
    failed: int
    groups: dict[str, tuple[int, int]] = field(default_factory=dict)  # name -> (failed, rows)
    reasons: tuple[tuple[str, int], ...] = ()

    @property
    def rate(self) -> float:
        return self.failed / self.rows if self.rows else 0.0

    def all_failed_groups(self) -> list[str]:
        return sorted(g for g, (f, n) in self.groups.items() if n > 0 and f == n)


def _reason(error: str) -> str:
    """The error's first line, cut to 120 characters (a reason to count, not the full text)."""
    first = (error.strip().splitlines() or [""])[0]
    return first[:120]


def assess(
    table: str, df: pl.DataFrame, *, group: str | None = "system", error_col: str = "error"
) -> TableFailures:
    """Count ``df``'s rows whose ``error_col`` is not null, overall and per ``group`` value."""
    if error_col not in df.columns or df.height == 0:
        return TableFailures(table, df.height, 0)
    failed_mask = df[error_col].is_not_null()
    reasons = Counter(_reason(e) for e in df.filter(failed_mask)[error_col].to_list())
    groups: dict[str, tuple[int, int]] = {}
    if group is not None and group in df.columns:
        per = df.group_by(group).agg(
            pl.col(error_col).is_not_null().sum().alias("failed"), pl.len().alias("rows")
        )
        for name, failed, rows in per.iter_rows():
            groups[str(name)] = (int(failed), int(rows))
    return TableFailures(
        table,
        df.height,
        int(failed_mask.sum()),
        groups,
        tuple(reasons.most_common(3)),
    )


def verdict(stage: str, t: TableFailures, policy: FailureParams) -> str | None:
    """The one-line failure message for ``t`` under ``policy``, or None when acceptable."""
    why: list[str] = []
    if t.rows and t.rate > policy.max_error_rate:
        why.append(
            f"{t.failed}/{t.rows} rows failed ({t.rate:.0%} > "
            f"failure.max_error_rate {policy.max_error_rate:.0%})"
        )
    dead = t.all_failed_groups() if policy.fail_on_system else []
    if dead:
        shown = ", ".join(f"'{g}'" for g in dead[:5]) + (" ..." if len(dead) > 5 else "")
        why.append(f"every row failed for {shown}")
    if not why:
        return None
    top = f"; most common error: {t.reasons[0][0]!r} (x{t.reasons[0][1]})" if t.reasons else ""
    return f"{stage}: {t.table}: " + "; ".join(why) + top


def enforce(stage: str, tables: Sequence[TableFailures], policy: FailureParams) -> None:
    """Log each table's failed-row count; raise StageFailed naming every breach."""
    breaches: list[str] = []
    for t in tables:
        if t.failed:
            log.warning(
                "%s: %s: %d/%d rows failed (%.0f%%)%s",
                stage,
                t.table,
                t.failed,
                t.rows,
                100 * t.rate,
                f"; e.g. {t.reasons[0][0]!r}" if t.reasons else "",
            )
        message = verdict(stage, t, policy)
        if message:
            breaches.append(message)
    if breaches:
        raise StageFailed(
            " | ".join(breaches) + " (outputs written with their error rows; "
            "raise failure.max_error_rate or set failure.fail_on_system: false to accept)"
        )
