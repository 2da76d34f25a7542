"""The discrimination check on scripted pairwise judges: a judge that prefers the
better control separates every pair of known order; a constant or coin-flip judge does not;
without controls the summary says the check was not made."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import polars as pl

from ragcourt.core.control_kinds import NO_CONTROLS, known_pairs
from ragcourt.judging.discrimination import NOT_SEPARATED, REVERSED, SEPARATED, dafe_check
from ragcourt.orchestration.params import load_params
from ragcourt.tournament.discrimination import resolvable_gap
from ragcourt.tournament.pairwise import OrderKey, OrderVerdict
from ragcourt.tournament.params import TournamentParams
from ragcourt.tournament.runner import run_tournament
from ragcourt.tournament.scoring import Probs
from ragcourt.tournament.summaries import TournamentSummary

ROOT = Path(__file__).resolve().parents[3]
SYSTEMS = ["real", "oracle", "random", "closed", "shuf"]
CONTROLS = {"oracle": "oracle", "random": "random", "closed": "none", "shuf": "shuffled"}
QUALITY = {"oracle": 3, "real": 2, "random": 1, "closed": 1, "shuf": 0}
QUESTIONS = [f"q{i:02d}" for i in range(20)]


class QualityJudge:
    """Scripted pairwise judge: the higher-quality system wins every question."""

    name = "scripted_quality"

    def judge(self, keys: Sequence[OrderKey]) -> list[OrderVerdict]:
        out = []
        for k in keys:
            a, b = QUALITY[k.first], QUALITY[k.second]
            p = Probs(0.9, 0.05, 0.05) if a > b else Probs(0.05, 0.9, 0.05)
            out.append(OrderVerdict(p if a != b else Probs(0.1, 0.1, 0.8)))
        return out


class ConstantJudge:
    """Scripted pairwise judge: always a tie."""

    name = "scripted_constant"

    def judge(self, keys: Sequence[OrderKey]) -> list[OrderVerdict]:
        return [OrderVerdict(Probs(0.1, 0.1, 0.8)) for _ in keys]


class CoinFlipJudge:
    """Scripted pairwise judge: "A" or "B" by a hash coin of (pair, question), whatever the
    answers; both presentation orders get the same coin for the same system."""

    name = "scripted_coin"

    def __init__(self, salt: int = 0) -> None:
        self.salt = salt

    def judge(self, keys: Sequence[OrderKey]) -> list[OrderVerdict]:
        out = []
        for k in keys:
            lo, hi = sorted((k.first, k.second))
            key = f"{self.salt}|{lo}|{hi}|{k.question_id}"
            coin = hashlib.sha256(key.encode()).digest()[0] % 2
            winner = lo if coin else hi
            first_wins = winner == k.first
            out.append(
                OrderVerdict(Probs(0.9, 0.05, 0.05) if first_wins else Probs(0.05, 0.9, 0.05))
            )
        return out


def _tp(round_robin: bool = True) -> TournamentParams:
    tp = load_params(ROOT / "params.yaml").tournament
    return tp.model_copy(update={"bootstrap": 200, "round_robin": round_robin})


def test_known_pairs_put_the_better_control_first() -> None:
    pairs = known_pairs(SYSTEMS, CONTROLS)
    assert ("oracle", "random") in pairs and ("oracle", "closed") in pairs
    # random passages and closed book are not known to beat another question's answer
    assert {good for good, bad in pairs if bad == "shuf"} == {"real", "oracle"}
    assert len(pairs) == 4 and known_pairs(SYSTEMS, {}) == []


def test_a_judge_preferring_the_oracle_separates_scripted_judge() -> None:
    out = run_tournament(QualityJudge(), SYSTEMS, QUESTIONS, _tp(), CONTROLS)
    d = out.summary.discrimination
    assert d is not None and d.status == "checked" and len(d.pairs) == 4
    assert all(p.verdict == SEPARATED for p in d.pairs), [
        (p.better, p.worse, p.verdict) for p in d.pairs
    ]
    for p in d.pairs:
        assert p.win_rate == 1.0 and p.questions == 20 and p.elo_gap > 0
        assert p.elo_gap_lo is not None and p.elo_gap_lo > 0
    assert d.separated == 4 and d.not_separated == 0
    board = out.leaderboard
    assert dict(board.select("system", "control").rows()) == {"real": None, **CONTROLS}
    # the summary with the check survives its model
    dumped = out.summary.model_dump(mode="json")
    assert TournamentSummary.model_validate(dumped).model_dump(mode="json") == dumped


def test_an_inverted_judge_gives_reversed_scripted_judge() -> None:
    class Inverted(QualityJudge):
        def judge(self, keys: Sequence[OrderKey]) -> list[OrderVerdict]:
            flipped = [OrderKey(k.second, k.first, k.question_id) for k in keys]
            return super().judge(flipped)

    out = run_tournament(Inverted(), SYSTEMS, QUESTIONS, _tp(), CONTROLS)
    d = out.summary.discrimination
    assert d is not None and [p.verdict for p in d.pairs] == [REVERSED] * 4  # every known pair


def test_constant_and_coin_flip_judges_do_not_separate_scripted_judge() -> None:
    out = run_tournament(ConstantJudge(), SYSTEMS, QUESTIONS, _tp(), CONTROLS)
    d = out.summary.discrimination
    assert d is not None and [p.verdict for p in d.pairs] == [NOT_SEPARATED] * 4
    # a blind (coin-flip) judge: a 95% interval may exclude 0 by chance in about 5% of pairs,
    # so check the rate over independent coins, not one realisation (measured: 3/120)
    separated = total = 0
    for salt in range(10):
        coin = run_tournament(CoinFlipJudge(salt), SYSTEMS, QUESTIONS, _tp(), CONTROLS)
        dc = coin.summary.discrimination
        assert dc is not None and dc.resolvable_elo_gap is not None
        assert dc.resolvable_elo_gap > 0  # coin: noisy gaps
        separated += dc.separated
        total += len(dc.pairs)
    assert separated / total <= 0.10, (separated, total)


def test_unplayed_known_pairs_are_judged_for_the_check_scripted_judge() -> None:
    tp = _tp(round_robin=False).model_copy(update={"rounds": 1})
    out = run_tournament(QualityJudge(), SYSTEMS, QUESTIONS, tp, CONTROLS)
    d = out.summary.discrimination
    assert d is not None and [p.questions for p in d.pairs] == [20] * 4
    assert d.judge_calls_executed > 0
    assert out.summary.judge_calls_executed == out.summary.swiss.judge_calls_executed + (
        d.judge_calls_executed
    )


def test_no_controls_says_validity_not_checked_scripted_judge() -> None:
    out = run_tournament(QualityJudge(), SYSTEMS, QUESTIONS, _tp(), {})
    d = out.summary.discrimination
    assert d is not None and d.status == NO_CONTROLS and d.pairs == []
    assert out.summary.model_dump(mode="json")["discrimination"]["status"] == (
        "no controls: validity not checked"
    )


def test_resolvable_gap_is_the_median_half_width() -> None:
    rng = np.random.default_rng(0)
    reps = np.column_stack([rng.normal(0, 10, 4000), np.zeros(4000), np.full(4000, 5.0)])
    # pairs (0,1) and (0,2): half-width ~1.96*10; pair (1,2): 0 -> median ~19.6
    assert abs(resolvable_gap(reps) - 19.6) < 1.0  # type: ignore[operator]
    assert resolvable_gap(np.zeros((0, 3))) is None


def _verdicts(per_system: Mapping[str, Sequence[bool | None]]) -> pl.DataFrame:
    rows = [
        {"system": s, "question_id": f"q{i:02d}", "final_verdict": v}
        for s, vs in per_system.items()
        for i, v in enumerate(vs)
    ]
    return pl.DataFrame(rows, schema={"system": pl.String, "question_id": pl.String,
                                      "final_verdict": pl.Boolean})  # fmt: skip


def test_dafe_check_separates_oracle_from_shuffled_and_not_equal_systems() -> None:
    ctl = {"o": "oracle", "s": "shuffled"}
    good = _verdicts({"o": [True] * 9 + [False, None], "s": [False] * 10 + [True]})
    d = dafe_check(good, ["o", "s"], ctl, 500, 0)
    (p,) = d.pairs
    assert (p.better, p.worse, p.questions) == ("o", "s", 10)  # the error row is left out
    assert p.accuracy_better == 0.9 and p.accuracy_worse == 0.0 and p.verdict == SEPARATED
    blind = _verdicts({"o": [True, False] * 6, "s": [False, True] * 6})
    (p,) = dafe_check(blind, ["o", "s"], ctl, 500, 0).pairs
    assert p.difference == 0.0 and p.verdict == NOT_SEPARATED
    none = dafe_check(good, ["o", "s"], {}, 500, 0)
    assert none.status == NO_CONTROLS and none.pairs == []
