"""DAFE arbitration with scripted judges (exact control of every vote): agreement,
disagreement, arbitrator breaking the tie, judge errors, and the run summary."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ragcourt.judging.dafe import DafeDecision, dafe_summary, resolve, run_dafe
from ragcourt.judging.vocabulary import AnswerItem, AnswerVerdict
from ragcourt.orchestration.params import Params, load_params

FAIL = "fail"
REPO_PARAMS = Path(__file__).resolve().parents[3] / "params.yaml"


def _params() -> Params:
    return load_params(REPO_PARAMS)


@dataclass
class ScriptedJudge:
    """Verdict per answer text from a script: True / False / FAIL (an error verdict)."""

    name: str
    script: dict[str, bool | str]
    uses_llm: bool = False
    seen: list[str] = field(default_factory=list)

    def judge(self, items: Sequence[AnswerItem]) -> list[AnswerVerdict]:
        out = []
        for it in items:
            self.seen.append(it.answer)
            v = self.script[it.answer]
            if v == FAIL:
                out.append(AnswerVerdict(self.name, None, error="scripted failure"))
            else:
                out.append(AnswerVerdict(self.name, bool(v), f"scripted {v}"))
        return out


def _items(*answers: str) -> list[AnswerItem]:
    return [AnswerItem("q", a, ("ref",)) for a in answers]


def _run(
    p1: dict[str, bool | str], p2: dict[str, bool | str], arb: dict[str, bool | str]
) -> tuple[list[DafeDecision], ScriptedJudge]:
    a, b, c = ScriptedJudge("A", p1), ScriptedJudge("B", p2), ScriptedJudge("C", arb)
    outs = run_dafe(_items(*p1), a, b, c)
    return outs, c


def test_dafe_agree_scripted_judges_no_arbitrator() -> None:
    outs, arb = _run({"x": True, "y": False}, {"x": True, "y": False}, {})
    assert [o.final for o in outs] == [True, False]
    assert all(o.resolution == "agreement" and o.agree for o in outs)
    assert arb.seen == []  # never called


def test_dafe_arbitrator_breaks_tie_scripted_judges() -> None:
    outs, arb = _run(
        {"x": True, "y": False},
        {"x": False, "y": True},
        {"x": True, "y": False},
    )
    assert arb.seen == ["x", "y"]
    assert [o.final for o in outs] == [True, False]
    assert all(o.resolution == "arbitration" and o.agree is False for o in outs)
    assert outs[0].arbitrator is not None and outs[0].arbitrator.verdict is True


def test_dafe_primary_error_policy_scripted_judges() -> None:
    outs, arb = _run(
        {"deg": FAIL, "split": True, "both": FAIL, "arbfail": True, "ok": True},
        {"deg": True, "split": FAIL, "both": FAIL, "arbfail": False, "ok": True},
        {"deg": True, "split": False, "arbfail": FAIL},
    )
    by = {o.primary1.judge + str(i): o for i, o in enumerate(outs)}
    deg, split, both, arbfail, ok = (by[f"A{i}"] for i in range(5))
    # one primary failed, arbitrator matches the survivor: 2 of 3 votes agree -> degraded
    assert deg.final is True and deg.resolution == "degraded" and deg.agree is None
    # one failed, arbitrator disagrees with the survivor: no majority -> error row
    assert split.final is None and split.resolution == "error"
    assert "no majority" in (split.error or "") and "B failed" in (split.error or "")
    # both failed: error row, arbitrator not called (one vote cannot be a majority)
    assert both.final is None and both.arbitrator is None and "both primaries" in (both.error or "")
    # disagreement and the arbitrator failed: error row, never a verdict
    assert arbfail.final is None and "arbitrator C failed" in (arbfail.error or "")
    assert ok.final is True
    assert arb.seen == ["deg", "split", "arbfail"]


def test_resolve_requires_arbitrator_on_disagreement() -> None:
    with pytest.raises(ValueError):
        resolve(AnswerVerdict("A", True), AnswerVerdict("B", False), None)


def test_dafe_summary_counts_scripted_judges() -> None:
    outs, _ = _run(
        {"a": True, "b": True, "c": False, "d": True, "e": FAIL},
        {"a": True, "b": False, "c": True, "d": True, "e": True},
        {"b": False, "c": True, "e": True},
    )
    s = dafe_summary(outs, llm_roles=(False, False, True))
    assert s["items"] == 5 and s["final_verdicts"] == 5 and s["degraded"] == 1
    assert s["both_primaries_ok"] == 4 and s["disagreements"] == 2
    assert s["disagreement_rate"] == pytest.approx(0.5)
    assert s["arbitrator_calls"] == 3
    assert s["judge_calls"] == 13 and s["judge_calls_always_three"] == 15
    assert s["judge_calls_saved"] == 2
    assert s["llm_judge_calls"] == 3 and s["llm_judge_calls_always_three"] == 5
    # finals: a T, b F, c T, d T, e T. A: a,b,c,d -> agrees on a,d = 2/4
    assert s["per_judge"]["A"] == {"n": 4, "agreement_with_final": 0.5}
    # B: a,b,c,d,e all equal the final
    assert s["per_judge"]["B"]["agreement_with_final"] == 1.0
    assert s["per_judge"]["C"] == {"n": 3, "agreement_with_final": 1.0}
