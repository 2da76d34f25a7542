"""The discrimination check: do the judges order the pairs whose order is known?

Known pairs (better, worse) come from the control systems
(:func:`ragcourt.core.control_kinds.known_pairs`). For each, a statistic ``d`` (DAFE:
accuracy(better) − accuracy(worse) over the questions both have a verdict for; tournament: the
Elo gap) and its percentile bootstrap interval ``[lo, hi]`` over questions give the verdict:
``separated`` when lo > 0, ``reversed`` when hi < 0, otherwise :data:`NOT_SEPARATED`. Without
any known pair the check reports :data:`~ragcourt.core.control_kinds.NO_CONTROLS`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl

from ragcourt.core.control_kinds import NO_CONTROLS, known_pairs
from ragcourt.core.fixed_model import FixedModel
from ragcourt.core.intervals import percentile_interval

SEPARATED = "separated"
REVERSED = "reversed"
NOT_SEPARATED = (
    "not separated: the judges cannot tell these apart on this data, and rankings among "
    "real systems at smaller gaps are not trustworthy"
)
CHECKED = "checked"
LEVEL = 0.95


def verdict(lo: float | None, hi: float | None) -> str:
    """``separated`` (lo > 0), ``reversed`` (hi < 0) or :data:`NOT_SEPARATED` (no interval:
    "not checked: ..."), for an interval of better − worse."""
    if lo is None or hi is None or not (np.isfinite(lo) and np.isfinite(hi)):
        return "not checked: no bootstrap interval (no valid judgement or bootstrap off)"
    if lo > 0:
        return SEPARATED
    if hi < 0:
        return REVERSED
    return NOT_SEPARATED


def count_verdicts(verdicts: Sequence[str]) -> dict[str, int]:
    """How many pairs are separated / reversed / not separated / not checked."""
    return {
        "separated": sum(v == SEPARATED for v in verdicts),
        "reversed": sum(v == REVERSED for v in verdicts),
        "not_separated": sum(v == NOT_SEPARATED for v in verdicts),
        "not_checked": sum(v.startswith("not checked") for v in verdicts),
    }


class KnownPair(FixedModel):
    """A pair of known order: the better and the worse system and their control kinds."""

    better: str
    worse: str
    better_control: str | None
    worse_control: str | None


def known_pair_fields(good: str, bad: str, controls: Mapping[str, str]) -> dict[str, Any]:
    """The :class:`KnownPair` fields of (``good``, ``bad``) (``controls``: system -> kind)."""
    return {
        "better": good,
        "worse": bad,
        "better_control": controls.get(good),
        "worse_control": controls.get(bad),
    }


class DafePair(KnownPair):
    """DAFE accuracy of a known pair over the questions both systems have a verdict for."""

    questions: int
    accuracy_better: float | None
    accuracy_worse: float | None
    difference: float | None
    difference_lo: float | None
    difference_hi: float | None
    verdict: str


class DafeDiscrimination(FixedModel):
    """``discrimination`` of the judge summary: DAFE accuracy on the known pairs."""

    status: str  # "checked" or "no controls: validity not checked"
    controls: dict[str, str]
    pairs: list[DafePair]
    separated: int
    reversed: int
    not_separated: int
    not_checked: int
    bootstrap: int
    seed: int
    level: float
    note: str


DAFE_NOTE = (
    "difference = accuracy(better) − accuracy(worse) over questions with a DAFE verdict for "
    "both; 95% percentile bootstrap over those questions; separated: lower bound > 0"
)


def dafe_check(
    verdicts: pl.DataFrame,
    systems: Sequence[str],
    controls: Mapping[str, str],
    n_boot: int,
    seed: int,
) -> DafeDiscrimination:
    """The DAFE discrimination check from the verdicts table (``final_verdict`` per
    (system, question); error rows have none and are left out of both sides)."""
    pairs = known_pairs(systems, controls)
    ok = verdicts.filter(pl.col("final_verdict").is_not_null())
    per: dict[str, dict[str, bool]] = {}
    for s, q, v in ok.select("system", "question_id", "final_verdict").iter_rows():
        per.setdefault(s, {})[q] = bool(v)
    rng = np.random.default_rng(seed)
    out: list[DafePair] = []
    for good, bad in pairs:
        g, b = per.get(good, {}), per.get(bad, {})
        qs = sorted(set(g) & set(b))
        diff = np.array([float(g[q]) - float(b[q]) for q in qs])
        ci = None
        if qs and n_boot > 0:
            counts = rng.multinomial(len(qs), np.full(len(qs), 1.0 / len(qs)), size=n_boot)
            ci = percentile_interval(counts @ diff / len(qs))
        lo, hi = ci if ci is not None else (None, None)
        out.append(
            DafePair(
                **known_pair_fields(good, bad, controls),
                questions=len(qs),
                accuracy_better=float(np.mean([g[q] for q in qs])) if qs else None,
                accuracy_worse=float(np.mean([b[q] for q in qs])) if qs else None,
                difference=float(diff.mean()) if qs else None,
                difference_lo=lo,
                difference_hi=hi,
                verdict=verdict(lo, hi),
            )
        )
    return DafeDiscrimination(
        status=CHECKED if pairs else NO_CONTROLS,
        controls=dict(controls),
        pairs=out,
        **count_verdicts([p.verdict for p in out]),
        bootstrap=n_boot,
        seed=seed,
        level=LEVEL,
        note=DAFE_NOTE,
    )
