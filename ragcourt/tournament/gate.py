"""The release gate: is a candidate configuration significantly worse than a baseline?
(spec §6, "Gate"). Pure: it reads finished summaries and tables, it makes no model call.

Elo view: for candidate c and baseline b, g = Elo_c − Elo_b of the Swiss ratings and [lo, hi]
the 95% percentile bootstrap interval of the same difference (the tournament summary's
``elo_gaps``: the leaderboard's resamples). DAFE view: g = accuracy_c − accuracy_b over the
questions both have a final verdict for, [lo, hi] its 95% paired percentile bootstrap over
those questions. With a margin m ≥ 0 (Elo points, or accuracy):

- ``worse`` when hi < −m;
- ``undecided`` when lo ≤ −m ≤ hi (the closed interval holds −m) or there is no interval;
- ``not worse`` when lo > −m, and ``better`` when moreover lo > 0.

Exit code, first that applies: 3 when the validity check failed (a pair of two controls of known
order is not separated), 1 when a candidate is worse, 4 when a candidate is undecided, else 0.
Questions needed by an undecided candidate: assuming the interval's half-width h = (hi − lo)/2
shrinks as 1/√n and the gap stays the same, n_needed = ⌈n·(h / |g + m|)²⌉ (None when g = −m).
Each candidate's interval is a 95% interval on its own: with K candidates the chance that at
least one no-worse candidate is called worse can reach K·2.5%.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

import numpy as np
import polars as pl

from ragcourt.core.control_kinds import is_control_pair
from ragcourt.core.errors import RagcourtError, one_line
from ragcourt.core.fixed_model import FixedModel
from ragcourt.core.intervals import percentile_interval
from ragcourt.judging.discrimination import SEPARATED, DafeDiscrimination
from ragcourt.tournament.discrimination import TournamentDiscrimination
from ragcourt.tournament.gaps import EloGaps, questions_to_resolve
from ragcourt.tournament.summaries import TournamentSummary

EXIT_PASS, EXIT_WORSE, EXIT_INVALID, EXIT_UNDECIDED = 0, 1, 3, 4
WORSE, UNDECIDED, NOT_WORSE, BETTER = "worse", "undecided", "not worse", "better"
View = Literal["elo", "dafe"]
UNITS: dict[str, str] = {"elo": "Elo points", "dafe": "accuracy"}
LEVEL = 0.95
METHOD_NOTE = (
    "worse: upper bound of the 95% interval of (candidate − baseline) < −margin; undecided: "
    "the interval holds −margin; not worse: lower bound > −margin (better: also > 0). "
    "Questions needed (undecided): n·(half-width / |gap + margin|)², assuming the half-width "
    "shrinks as 1/√n and the gap stays the same. One 95% interval per candidate."
)


class GateCandidate(FixedModel):
    """One candidate against the baseline: gap = candidate − baseline, its interval, verdict."""

    candidate: str
    gap: float | None
    lo: float | None
    hi: float | None
    verdict: str  # worse | undecided | not worse | better
    questions_needed: int | None  # undecided only: estimate (module doc)
    note: str


class GateValidity(FixedModel):
    """The validity check the gate reads: pairs of two controls of known order separated?"""

    status: Literal["passed", "failed", "not checked"]
    detail: str
    failed_pairs: list[str]


class GateResult(FixedModel):
    """What ``ragcourt gate`` decided, and its exit code."""

    view: View
    unit: str
    baseline: str
    margin: float
    level: float
    n_questions: int
    validity: GateValidity
    candidates: list[GateCandidate]
    exit_code: int
    decision: str
    method_note: str


def classify(
    gap: float | None, lo: float | None, hi: float | None, margin: float, n_questions: int
) -> tuple[str, int | None]:
    """(verdict, questions needed) of one candidate (module doc; bounds inclusive at −m)."""
    if gap is None or lo is None or hi is None or not (np.isfinite(lo) and np.isfinite(hi)):
        return UNDECIDED, None
    if hi < -margin:
        return WORSE, None
    if lo > -margin:
        return (BETTER if lo > 0 else NOT_WORSE), None
    return UNDECIDED, questions_to_resolve(n_questions, gap + margin, lo + margin, hi + margin)


def validity_of(
    check: TournamentDiscrimination | DafeDiscrimination | None, require: bool = False
) -> GateValidity:
    """``failed`` when a pair of two controls is not separated (reversed, not separated or
    without an interval); ``not checked`` without such pairs (``failed`` when ``require``)."""
    status: Literal["failed", "not checked"] = "failed" if require else "not checked"
    if check is None:
        return GateValidity(
            status=status, detail="no discrimination check in the summary", failed_pairs=[]
        )
    pairs = [p for p in check.pairs if is_control_pair(p.better_control, p.worse_control)]
    if check.status != "checked" or not pairs:
        why = check.status if check.status != "checked" else "no pair of two controls"
        return GateValidity(status=status, detail=why, failed_pairs=[])
    bad = [
        f"{p.better} > {p.worse}: {p.verdict.split(':')[0]}"
        for p in pairs
        if p.verdict != SEPARATED
    ]
    if bad:
        return GateValidity(
            status="failed",
            detail=f"{len(bad)} of {len(pairs)} pairs of controls not separated",
            failed_pairs=bad,
        )
    return GateValidity(
        status="passed",
        detail=f"{len(pairs)} of {len(pairs)} pairs of controls separated",
        failed_pairs=[],
    )


def exit_code(validity: GateValidity, verdicts: Sequence[str]) -> int:
    """3 (validity failed), else 1 (a candidate worse), else 4 (one undecided), else 0."""
    if validity.status == "failed":
        return EXIT_INVALID
    if WORSE in verdicts:
        return EXIT_WORSE
    if UNDECIDED in verdicts:
        return EXIT_UNDECIDED
    return EXIT_PASS


def check_names(
    baseline: str, candidates: Sequence[str] | None, known: Sequence[str], where: str
) -> list[str]:
    """The candidates (every known system but the baseline when None); a one-line error naming
    an unknown baseline or candidate and the known systems."""
    listed = ", ".join(known)
    if baseline not in known:
        raise RagcourtError(
            f"gate baseline '{baseline}' is not a system of {where} (known: {listed})"
        )
    chosen = [s for s in known if s != baseline] if not candidates else list(candidates)
    for c in chosen:
        if c not in known:
            raise RagcourtError(
                f"gate candidate '{c}' is not a system of {where} (known: {listed})"
            )
    return [c for c in chosen if c != baseline]


def _gap_of(gaps: EloGaps, cand: str, base: str) -> tuple[float, float | None, float | None]:
    """Elo_cand − Elo_base and its interval from the pair in rank order (negated if needed)."""
    for p in gaps.pairs:
        if (p.better, p.worse) == (cand, base):
            return p.elo_gap, p.elo_gap_lo, p.elo_gap_hi
        if (p.better, p.worse) == (base, cand):
            lo, hi = p.elo_gap_lo, p.elo_gap_hi
            return -p.elo_gap, (-hi if hi is not None else None), (-lo if lo is not None else None)
    raise RagcourtError(f"tournament summary: no Elo gap between '{cand}' and '{base}'")


def decide(
    view: View,
    baseline: str,
    margin: float,
    n_questions: int,
    validity: GateValidity,
    rows: Sequence[tuple[str, float | None, float | None, float | None, int]],
) -> GateResult:
    """The result from (candidate, gap, lo, hi, questions) rows."""
    if not (margin >= 0 and np.isfinite(margin)):
        raise RagcourtError(f"gate margin must be a finite number >= 0, got {margin}")
    out = []
    for cand, gap, lo, hi, n in rows:
        verdict, needed = classify(gap, lo, hi, margin, n)
        note = ""
        if verdict == UNDECIDED:
            note = "not enough questions" + (
                f": about {needed} needed" if needed is not None else ""
            )
            if lo is None or hi is None:
                note = "no interval (no valid judgement, or bootstrap off)"
        out.append(
            GateCandidate(
                candidate=cand,
                gap=gap,
                lo=lo,
                hi=hi,
                verdict=verdict,
                questions_needed=needed,
                note=note,
            )
        )
    code = exit_code(validity, [c.verdict for c in out])
    decision = {
        EXIT_INVALID: f"validity check failed ({validity.detail}): the ranking is no evidence",
        EXIT_WORSE: "a candidate is significantly worse than the baseline",
        EXIT_UNDECIDED: "cannot decide: not enough questions",
        EXIT_PASS: "no candidate is significantly worse than the baseline",
    }[code]
    return GateResult(
        view=view,
        unit=UNITS[view],
        baseline=baseline,
        margin=margin,
        level=LEVEL,
        n_questions=n_questions,
        validity=validity,
        candidates=out,
        exit_code=code,
        decision=decision,
        method_note=METHOD_NOTE,
    )


def elo_gate(
    summary: TournamentSummary,
    baseline: str,
    margin: float,
    candidates: Sequence[str] | None = None,
    require_validity: bool = False,
) -> GateResult:
    """The gate on the tournament summary's Elo gaps (real systems; controls excluded)."""
    gaps = summary.elo_gaps
    if gaps is None:
        raise RagcourtError(f"tournament summary: no Elo gaps (outcome: {summary.outcome})")
    chosen = check_names(baseline, candidates, gaps.systems, "the tournament")
    validity = validity_of(summary.discrimination, require_validity)
    n = gaps.n_questions
    rows = [(c, *_gap_of(gaps, c, baseline), n) for c in chosen]
    return decide("elo", baseline, margin, n, validity, rows)


def accuracy_gaps(
    verdicts: pl.DataFrame, baseline: str, candidate: str, n_boot: int, seed: int
) -> tuple[float | None, float | None, float | None, int]:
    """accuracy(candidate) − accuracy(baseline) over the questions both have a final verdict
    for, its paired percentile bootstrap interval (``n_boot`` resamples, seeded) and the count."""
    ok = verdicts.filter(pl.col("final_verdict").is_not_null())
    per = {
        s: dict(zip(g["question_id"].to_list(), g["final_verdict"].to_list(), strict=True))
        for s, g in ((s, ok.filter(pl.col("system") == s)) for s in (baseline, candidate))
    }
    qs = sorted(set(per[baseline]) & set(per[candidate]))
    if not qs:
        return None, None, None, 0
    diff = np.array([float(per[candidate][q]) - float(per[baseline][q]) for q in qs])
    ci = None
    if n_boot > 0:
        rng = np.random.default_rng(seed)
        counts = rng.multinomial(len(qs), np.full(len(qs), 1.0 / len(qs)), size=n_boot)
        ci = percentile_interval(counts @ diff / len(qs), LEVEL)
    lo, hi = ci if ci is not None else (None, None)
    return float(diff.mean()), lo, hi, len(qs)


def dafe_gate(
    verdicts: pl.DataFrame,
    check: DafeDiscrimination | None,
    baseline: str,
    margin: float,
    n_boot: int,
    seed: int,
    candidates: Sequence[str] | None = None,
    require_validity: bool = False,
    controls: Mapping[str, str] | None = None,
) -> GateResult:
    """The gate on DAFE accuracy from the verdicts table (controls left out of the systems)."""
    kinds = dict(controls if controls is not None else (check.controls if check else {}))
    known = sorted(s for s in verdicts["system"].unique().to_list() if s not in kinds)
    chosen = check_names(baseline, candidates, known, "the verdicts table")
    validity = validity_of(check, require_validity)
    rows = []
    for c in chosen:
        gap, lo, hi, n = accuracy_gaps(verdicts, baseline, c, n_boot, seed)
        rows.append((c, gap, lo, hi, n))
    n_all = verdicts.filter(pl.col("system") == baseline)["question_id"].n_unique()
    return decide("dafe", baseline, margin, n_all, validity, rows)


def lines(result: GateResult) -> list[str]:
    """One line per candidate, then the decision: what the command prints (system names with
    control characters escaped, so each stays one line)."""
    digits = 0 if result.view == "elo" else 3

    def num(x: float | None) -> str:
        return "–" if x is None else f"{x:+.{digits}f}"

    out = [
        f"{one_line(c.candidate)}: {c.verdict}, gap {num(c.gap)} [{num(c.lo)}, {num(c.hi)}] "
        f"{result.unit} vs {one_line(result.baseline)}" + (f" ({c.note})" if c.note else "")
        for c in result.candidates
    ]
    out.append(
        f"gate: exit {result.exit_code}: {result.decision} (margin {result.margin:g} "
        f"{result.unit}; validity {result.validity.status}: {result.validity.detail})"
    )
    return out
