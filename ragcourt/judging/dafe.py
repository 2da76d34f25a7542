"""DAFE dynamic arbitration (spec §4): two primary judges; the arbitrator only when needed;
final verdict = the majority (at least two equal votes) of the three.

Failure policy (a failed verdict is never counted as correct or incorrect):
- both primaries valid and equal -> final = that verdict (``agreement``), no arbitrator;
- both valid and different -> arbitrator; final = majority (``arbitration``);
- exactly one primary failed -> arbitrator; if it matches the surviving primary the two
  matching votes are still a majority of three -> final = that verdict, marked
  ``degraded``; otherwise (split or arbitrator failed) -> error row;
- both primaries failed -> error row without calling the arbitrator (one vote cannot
  form a majority); a failed arbitrator on a disagreement -> error row.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ragcourt.judging.vocabulary import AnswerItem, AnswerJudge, AnswerVerdict

Resolution = Literal["agreement", "arbitration", "degraded", "error"]


@dataclass(frozen=True)
class DafeDecision:
    """DAFE's decision on one item: both primary verdicts, the arbitrator's (if called), the
    agreement flag (None when a primary failed), the final verdict and how it was reached."""

    primary1: AnswerVerdict
    primary2: AnswerVerdict
    arbitrator: AnswerVerdict | None
    agree: bool | None
    final: bool | None
    resolution: Resolution
    error: str | None = None


def needs_arbitrator(p1: AnswerVerdict, p2: AnswerVerdict) -> bool:
    """True on a disagreement or when exactly one primary failed."""
    if p1.ok and p2.ok:
        return p1.verdict != p2.verdict
    return p1.ok != p2.ok


def _fail(v: AnswerVerdict) -> str:
    return f"{v.judge} failed ({v.error or 'no verdict'})"


def resolve(p1: AnswerVerdict, p2: AnswerVerdict, arb: AnswerVerdict | None) -> DafeDecision:
    """Combine the votes of one item by the policy in the module docstring."""
    if p1.ok and p2.ok:
        if p1.verdict == p2.verdict:
            return DafeDecision(p1, p2, None, True, p1.verdict, "agreement")
        if arb is None:
            raise ValueError("a disagreement needs the arbitrator's verdict")
        if not arb.ok:
            return DafeDecision(p1, p2, arb, False, None, "error", f"arbitrator {_fail(arb)}")
        return DafeDecision(p1, p2, arb, False, arb.verdict, "arbitration")
    if not p1.ok and not p2.ok:
        return DafeDecision(
            p1, p2, arb, None, None, "error", f"both primaries failed: {_fail(p1)}; {_fail(p2)}"
        )
    good, bad = (p1, p2) if p1.ok else (p2, p1)
    if arb is None:
        raise ValueError("a failed primary needs the arbitrator's verdict")
    if arb.ok and arb.verdict == good.verdict:
        return DafeDecision(p1, p2, arb, None, good.verdict, "degraded")
    why = f"arbitrator {_fail(arb)}" if not arb.ok else "remaining verdicts split"
    return DafeDecision(p1, p2, arb, None, None, "error", f"no majority: {_fail(bad)}; {why}")


def run_dafe(
    items: Sequence[AnswerItem],
    primary1: AnswerJudge,
    primary2: AnswerJudge,
    arbitrator: AnswerJudge,
) -> list[DafeDecision]:
    """Judge ``items`` with both primaries, then the arbitrator on the items that need it."""
    v1 = primary1.judge(items)
    v2 = primary2.judge(items)
    if len(v1) != len(items) or len(v2) != len(items):
        raise ValueError("a primary judge returned a different number of verdicts than items")
    need = [i for i in range(len(items)) if needs_arbitrator(v1[i], v2[i])]
    arb_verdicts = arbitrator.judge([items[i] for i in need]) if need else []
    if len(arb_verdicts) != len(need):
        raise ValueError("the arbitrator returned a different number of verdicts than items")
    arb_by_idx = dict(zip(need, arb_verdicts, strict=True))
    return [resolve(v1[i], v2[i], arb_by_idx.get(i)) for i in range(len(items))]


def dafe_summary(
    decisions: Sequence[DafeDecision], llm_roles: tuple[bool, bool, bool] | None = None
) -> dict[str, Any]:
    """Run-level DAFE figures: disagreement rate, arbitrator calls, judge calls against
    always running three judges, and each judge's agreement with the final verdict.
    ``llm_roles`` (primary1, primary2, arbitrator is an LLM) adds the LLM-call counts."""
    n = len(decisions)
    both_ok = [o for o in decisions if o.agree is not None]
    disagreements = sum(1 for o in both_ok if not o.agree)
    arb_calls = sum(1 for o in decisions if o.arbitrator is not None)
    judge_calls = 2 * n + arb_calls
    counts: dict[str, list[int]] = {}  # judge -> [verdicts compared, equal to final]
    for o in decisions:
        if o.final is None:
            continue
        for v in (o.primary1, o.primary2, o.arbitrator):
            if v is not None and v.ok:
                c = counts.setdefault(v.judge, [0, 0])
                c[0] += 1
                c[1] += int(v.verdict == o.final)
    per_judge = {j: {"n": c[0], "agreement_with_final": c[1] / c[0]} for j, c in counts.items()}
    n_final = sum(1 for o in decisions if o.final is not None)
    out: dict[str, Any] = {
        "items": n,
        "final_verdicts": n_final,
        "error_rows": n - n_final,
        "degraded": sum(1 for o in decisions if o.resolution == "degraded"),
        "both_primaries_ok": len(both_ok),
        "disagreements": disagreements,
        "disagreement_rate": disagreements / len(both_ok) if both_ok else None,
        "arbitrator_calls": arb_calls,
        "judge_calls": judge_calls,
        "judge_calls_always_three": 3 * n,
        "judge_calls_saved": 3 * n - judge_calls,
        "judge_calls_saved_fraction": (3 * n - judge_calls) / (3 * n) if n else None,
        "judge_calls_per_verdict": judge_calls / n_final if n_final else None,
        "per_judge": per_judge,
    }
    if llm_roles is not None:
        p_llm = int(llm_roles[0]) + int(llm_roles[1])
        out["llm_judge_calls"] = p_llm * n + (arb_calls if llm_roles[2] else 0)
        out["llm_judge_calls_always_three"] = (p_llm + int(llm_roles[2])) * n
    return out
