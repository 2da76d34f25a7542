"""Single-system mode (DICE "baseline evaluation"): a new system against reference systems.

References come from an earlier leaderboard: ``high`` = its best system, ``low`` = its worst
and ``mid`` = the median rank (systems without answers in the current run are skipped). The
new system plays one match per tier with the same pairwise protocol; per-question outcomes
are wins (score > 0.5), ties (= 0.5) and losses. Its Elo is the *performance rating* against
the fixed reference Elos: the R solving Σ_t n_t·E(R, R_t) = Σ_t S_t (the maximum-likelihood
Elo given the opponents), so it does not depend on the order of the three matches. If it
wins or loses everything no finite solution exists and R is clipped 800 points beyond the
strongest / weakest reference (``elo_bounded`` = true).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl
from scipy.optimize import brentq

from ragcourt.core.errors import RagcourtError
from ragcourt.tournament.elo import expected_score
from ragcourt.tournament.memo import JudgementMemo

TIERS = ("high", "mid", "low")
CLIP = 800.0


def reference_tiers(
    leaderboard: pl.DataFrame, exclude: str | None = None, available: Sequence[str] | None = None
) -> pl.DataFrame:
    """(tier, system, elo) for high / mid / low from an earlier leaderboard."""
    lb = leaderboard.filter(pl.col("elo").is_not_null())
    if exclude is not None:
        lb = lb.filter(pl.col("system") != exclude)
    if available is not None:
        lb = lb.filter(pl.col("system").is_in(list(available)))
    lb = lb.sort(["elo", "system"], descending=[True, False])
    if lb.height < 3:
        raise RagcourtError(
            f"single-system mode needs 3 reference systems with answers in this run, found "
            f"{lb.height} ({lb['system'].to_list()})"
        )
    picks = [0, (lb.height - 1) // 2, lb.height - 1]
    return pl.DataFrame(
        {
            "tier": list(TIERS),
            "system": [lb["system"][i] for i in picks],
            "elo": [float(lb["elo"][i]) for i in picks],
        }
    )


def performance_rating(
    ref_elos: Sequence[float], scores: Sequence[float], ns: Sequence[int]
) -> tuple[float, bool]:
    """R with Σ n_t·E(R, R_t) = Σ S_t; (R, clipped?) — clipped when all won or all lost."""
    pts = [(r, s, n) for r, s, n in zip(ref_elos, scores, ns, strict=True) if n > 0]
    if not pts:
        return float("nan"), False
    lo, hi = min(r for r, _, _ in pts) - CLIP, max(r for r, _, _ in pts) + CLIP

    def gap(rating: float) -> float:
        return sum(n * expected_score(rating, r) - s for r, s, n in pts)

    if gap(lo) >= 0:
        return lo, True
    if gap(hi) <= 0:
        return hi, True
    return float(brentq(gap, lo, hi, xtol=1e-6)), False


def evaluate(
    system: str, tiers: pl.DataFrame, memo: JudgementMemo
) -> tuple[pl.DataFrame, dict[str, Any]]:
    """Play ``system`` against each tier's reference; per-tier table and summary dict."""
    refs = tiers["system"].to_list()
    memo.ensure([(system, r) for r in refs])
    records = []
    for tier, ref, ref_elo in tiers.select("tier", "system", "elo").iter_rows():
        rows = memo.rows(system, ref)
        ok = [r for r in rows if r["error"] is None]
        records.append(
            {
                "tier": tier,
                "reference_system": ref,
                "reference_elo": ref_elo,
                "n_questions": len(ok),
                "n_errors": len(rows) - len(ok),
                "score": sum(r["score_a"] for r in ok),
                "score_reference": sum(r["score_b"] for r in ok),
                "wins": sum(r["score_a"] > 0.5 for r in ok),
                "ties": sum(r["score_a"] == 0.5 for r in ok),
                "losses": sum(r["score_a"] < 0.5 for r in ok),
            }
        )
    table = pl.DataFrame(records)
    rating, clipped = performance_rating(
        table["reference_elo"].to_list(), table["score"].to_list(), table["n_questions"].to_list()
    )
    summary = {
        "system": system,
        "elo": rating,
        "elo_bounded": clipped,
        "tiers": {r["tier"]: {k: v for k, v in r.items() if k != "tier"} for r in records},
        "judge_errors": int(table["n_errors"].sum()),
    }
    return table.with_columns(system=pl.lit(system)), summary
