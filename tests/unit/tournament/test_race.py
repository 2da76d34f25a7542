"""The race's decision logic: the Hoeffding-Bonferroni drop rule at its boundary, the pairing
of survivors, a scripted race's calls and stopping reasons, and the stopping rule on the
tournament simulator (a loose bound on dropping the true best, and the power to drop a far
worse field)."""

from __future__ import annotations

import math

import pytest

from ragcourt.tournament.params import RaceParams
from ragcourt.tournament.race import (
    PairOutcome,
    RaceState,
    eliminate,
    hoeffding_radius,
    pairings,
    per_test_alpha,
    run_race,
)
from ragcourt.tournament.race_sim import Scenario, summarise, sweep, tied_top
from ragcourt.tournament.swiss import Pair


def test_per_test_level_is_bonferroni_over_looks_and_opponents() -> None:
    assert per_test_alpha(0.05, 5, 11) == pytest.approx(0.05 / 50)
    assert float(hoeffding_radius(20, 0.001)) == pytest.approx(math.sqrt(math.log(1000) / 40))


def _state_after(score_a: float, n: int) -> RaceState:
    state = RaceState(["a", "b", "c"], alpha=0.06, rounds_planned=1)  # a = 0.03
    state.record([PairOutcome("a", "b", score_a, n)])
    return state


def test_drop_exactly_when_the_upper_bound_is_below_half() -> None:
    n = 40
    r = float(hoeffding_radius(n, 0.03))
    # b's win rate is 1 - score_a / n; b is dropped iff that rate + r < 1/2
    edge = n - (0.5 - r) * n  # a's score that puts b's bound on 1/2
    kept = _state_after(edge - 1e-6, n)
    assert eliminate(kept, 1) == [] and kept.alive == [True, True, True]
    over = _state_after(edge + 1e-6, n)
    exits = eliminate(over, 1)
    assert [(e.system, e.against, e.questions) for e in exits] == [("b", "a", n)]
    assert exits[0].upper_bound < 0.5 and over.alive == [True, False, True]


def test_each_survivor_plays_the_best_ranked_others() -> None:
    state = RaceState(["a", "b", "c", "d", "e"], alpha=0.05, rounds_planned=3)
    state.record(
        [PairOutcome("a", x, 9.0, 10) for x in "bcde"]
        + [PairOutcome("b", x, 8.0, 10) for x in "cde"]
        + [PairOutcome("c", x, 7.0, 10) for x in "de"]
        + [PairOutcome("d", "e", 6.0, 10)]
    )
    assert [state.systems[i] for i in state.ranked()] == ["a", "b", "c", "d", "e"]
    assert pairings(state, 1) == [("a", "b"), ("a", "c"), ("a", "d"), ("a", "e")]
    # top two for everyone: a and b (a and b play each other and c), pairs counted once
    assert pairings(state, 2) == [
        ("a", "b"), ("a", "c"), ("b", "c"), ("a", "d"), ("b", "d"), ("a", "e"), ("b", "e")
    ]  # fmt: skip


def scripted_play(best: str) -> tuple[list[list[Pair]], object]:
    """Scripted judge: ``best`` wins every question, every other pair ties."""
    played: list[list[Pair]] = []

    def play(_r: int, pairs: list[Pair], questions: list[str]) -> list[PairOutcome]:
        played.append(pairs)
        n = len(questions)
        out = []
        for a, b in pairs:
            s = float(n) if a == best else 0.0 if b == best else n / 2
            out.append(PairOutcome(a, b, s, n))
        return out

    return played, play


def test_scripted_race_separates_the_best_and_counts_its_calls() -> None:
    systems = ["s1", "s2", "s3", "s4", "s5", "s6"]
    played, play = scripted_play("s4")
    cfg = RaceParams(alpha=0.05, rounds=4, round_questions=20, opponents=2, seed=1)
    res = run_race(systems, [f"q{k}" for k in range(100)], play, cfg)  # type: ignore[arg-type]
    assert res.winner == "s4" and res.leader == "s4" and res.stopped == "separated"
    assert {e.system for e in res.exits} == set(systems) - {"s4"}
    assert all(e.against == "s4" and e.win_rate == 0.0 for e in res.exits)
    answers = sum(len(r.survivors) * r.questions for r in res.rounds)
    judge = sum(2 * r.pairs * r.questions for r in res.rounds)
    assert (res.calls.answers, res.calls.judge) == (answers, judge)
    assert [r.pairs for r in res.rounds] == [len(p) for p in played]
    used = res.questions_used
    assert used == 20 * res.rounds_played
    assert res.round_robin_calls.answers == 6 * used
    assert res.round_robin_calls.judge == 6 * 5 * used  # 15 pairs x 2 orders
    assert res.calls_fraction == pytest.approx((answers + judge) / (36 * used))
    assert res.survivors[0].system == "s4" and len(res.survivors) == 1


def test_budget_and_question_pool_stop_the_race() -> None:
    systems = ["s1", "s2", "s3", "s4"]
    _, play = scripted_play("nobody")  # every pair ties: nobody can be dropped
    cfg = RaceParams(alpha=0.05, rounds=10, round_questions=10, opponents=1, max_calls=250)
    res = run_race(systems, [f"q{k}" for k in range(100)], play, cfg)  # type: ignore[arg-type]
    # a round: 4 answers x 10 + 3 pairs x 2 x 10 = 100 calls; a third would pass 250
    assert res.stopped == "budget" and res.rounds_played == 2 and res.calls.total == 200
    assert res.winner is None and len(res.survivors) == 4
    res = run_race(systems, [f"q{k}" for k in range(25)], play, RaceParams(rounds=10))  # type: ignore[arg-type]
    # only full rounds (the bound counts looks at n = k x round_questions): 5 are left unused
    assert res.stopped == "questions" and res.questions_used == 20
    assert [r.questions for r in res.rounds] == [10, 10]


def test_stopping_rule_on_the_simulator_keeps_the_best_and_drops_a_far_worse_field() -> None:
    # loose bound: at alpha 0.3, among equal systems S00 (a best) is dropped in at most ~30%
    # of races (20 here); the same rule without the Bonferroni correction (0.3 per test over
    # 3 looks x 5 opponents) dropped it in 8 of these 20 races when tried
    cfg = RaceParams(alpha=0.3, rounds=3, round_questions=20, opponents=2)
    equal = summarise(sweep(Scenario("equal", 6, tuple([0.0] * 6)), cfg, range(20)))
    assert equal["drop_rate"] <= 0.3
    # power: one system 400 Elo above a field 100 Elo apart is kept and the rest are dropped
    far = summarise(sweep(Scenario("far", 6, (400.0, *tied_top(5, 1, 100.0))), cfg, range(6)))
    assert far["dropped_best"] == 0 and far["separated"] >= 0.8
