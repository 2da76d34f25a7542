"""Loud failure: a stage whose failed rows exceed the policy exits non-zero after writing.

A table's failed rows are those whose ``error`` column is set (call errors, unparsable
replies). :func:`assess` counts them overall and per group (``system``); the stage is failed
when ``failed / rows > failure.max_error_rate`` or, with ``failure.fail_on_system``, when every
row of one group failed (and it has at least one row). :func:`enforce` logs every table's
count (WARNING when any row failed) and raises :class:`StageFailed` with one line naming the
stage, table, counts and the most common error - after the stage wrote its outputs, so the
error rows are there to read (:func:`ragcourt.core.io.output_set` commits on StageFailed).

The policy applies to real systems only. Rows of a control system (the ``controls`` a stage
gives :func:`assess`, e.g. from the answers' ``control`` column) are set aside: they stay in
the table as explicit error rows with their reason, :func:`enforce` logs a WARNING naming the
control and its most common reason, and they never fail the stage (a control that cannot
answer, e.g. the oracle on questions without a ground-truth span, says nothing about the
systems under test).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import polars as pl

from ragcourt.core.errors import StageFailed
from ragcourt.core.params import FailureParams

log = logging.getLogger("ragcourt.failures")


@dataclass(frozen=True)
class ControlFailures:
    """Failed rows of one control system: logged, never a reason to fail the stage."""

    system: str
    kind: str
    failed: int
    rows: int
    reason: tuple[str, int] | None = None  # the most common reason and its count


@dataclass(frozen=True)
class TableFailures:
    """Failed-row counts of one output table's real systems: overall, per group, the top
    reasons; ``controls`` holds the counts of the control systems' rows, set aside."""

    table: str
    rows: int
    failed: int
    groups: dict[str, tuple[int, int]] = field(default_factory=dict)  # name -> (failed, rows)
    reasons: tuple[tuple[str, int], ...] = ()
    controls: tuple[ControlFailures, ...] = ()

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
    table: str,
    df: pl.DataFrame,
    *,
    group: str | None = "system",
    error_col: str = "error",
    controls: Mapping[str, str] | None = None,
) -> TableFailures:
    """Count ``df``'s rows whose ``error_col`` is not null, overall and per ``group`` value.

    Rows whose ``group`` value is one of ``controls`` (``{system: control kind}``) are set
    aside into :attr:`TableFailures.controls`."""
    kinds = dict(controls or {})
    if group is None or group not in df.columns or not kinds:
        return _count(table, df, group, error_col)
    is_control = pl.col(group).cast(pl.String).is_in(list(kinds))
    real = _count(table, df.filter(~is_control), group, error_col)
    return replace(real, controls=_control_failures(df.filter(is_control), kinds, group, error_col))


def _count(table: str, df: pl.DataFrame, group: str | None, error_col: str) -> TableFailures:
    """The failed-row counts of every row of ``df`` (no control set aside)."""
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


def _control_failures(
    df: pl.DataFrame, kinds: Mapping[str, str], group: str, error_col: str
) -> tuple[ControlFailures, ...]:
    """Per control system of ``df`` (sorted by name): its failed and total rows, top reason."""
    out: list[ControlFailures] = []
    for name in sorted(str(n) for n in df[group].unique().to_list()):
        t = _count("", df.filter(pl.col(group).cast(pl.String) == name), None, error_col)
        top = t.reasons[0] if t.reasons else None
        out.append(ControlFailures(name, kinds[name], t.failed, t.rows, top))
    return tuple(out)


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
    """Log each table's failed-row count (and each control system's, which never fails the
    stage); raise StageFailed naming every breach of the real systems' rows."""
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
        for c in t.controls:
            _log_control(stage, t.table, c)
        message = verdict(stage, t, policy)
        if message:
            breaches.append(message)
    if breaches:
        raise StageFailed(
            " | ".join(breaches) + " (outputs written with their error rows; "
            "raise failure.max_error_rate or set failure.fail_on_system: false to accept)"
        )


def _log_control(stage: str, table: str, c: ControlFailures) -> None:
    """A WARNING for a control system with failed rows, naming it and its top reason."""
    if not c.failed:
        return
    log.warning(
        "%s: %s: control system '%s' (%s): %d/%d rows failed%s (a control never fails the stage)",
        stage,
        table,
        c.system,
        c.kind,
        c.failed,
        c.rows,
        f"; most common reason: {c.reason[0]!r} (x{c.reason[1]})" if c.reason else "",
    )
