"""Swiss pairing (no repeats, backtracking, byes, rounds) and round-robin schedules."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragcourt.tournament.swiss import (
    MatchScore,
    Pair,
    default_rounds,
    max_rounds,
    pair_round,
    round_robin,
    round_robin_schedule,
    swiss,
)


def random_play(seed: int, n_q: int = 10):
    rng = np.random.default_rng(seed)

    def play(pairs: list[Pair]) -> list[MatchScore]:
        out = []
        for a, b in pairs:
            s = float(rng.integers(0, n_q + 1))
            out.append(MatchScore(a, b, s, n_q - s, n_q, 0))
        return out

    return play


def names(n: int) -> list[str]:
    return [f"sys{i}" for i in range(n)]


@settings(max_examples=60, deadline=None)
@given(n=st.integers(2, 17), seed=st.integers(0, 10_000), extra=st.integers(0, 20))
def test_swiss_never_repeats_a_pair(n: int, seed: int, extra: int) -> None:
    res = swiss(names(n), random_play(seed), rounds=extra + 1, seed=seed)
    played = [frozenset((m.system_a, m.system_b)) for m in res.matches if m.system_b]
    assert len(played) == len(set(played))
    for rnd in range(1, res.rounds_played + 1):  # each system at most once per round
        seen = [s for m in res.matches if m.round == rnd for s in (m.system_a, m.system_b) if s]
        assert len(seen) == len(set(seen)) == n


def test_dice_default_eight_systems_sixteen_matches() -> None:
    assert default_rounds(8) == 4
    res = swiss(names(8), random_play(0))
    assert res.rounds_played == 4
    assert sum(m.system_b is not None for m in res.matches) == 16
    assert res.stopped == "rounds"


def test_round_robin_plays_every_pair_once() -> None:
    for n in (2, 5, 8, 9):
        res = round_robin(names(n), random_play(n))
        played = [frozenset((m.system_a, m.system_b)) for m in res.matches if m.system_b]
        assert len(played) == n * (n - 1) // 2 == len(set(played))
        assert set(played) == {frozenset(p) for p in itertools.combinations(names(n), 2)}
        sched = round_robin_schedule(names(n))
        assert len(sched) == max_rounds(n)


def test_backtracking_when_greedy_closest_pairing_fails() -> None:
    ratings = {"a": 1600.0, "b": 1590.0, "c": 1500.0, "d": 1490.0}
    tie = {s: i for i, s in enumerate(ratings)}
    # greedy a-b would leave c-d, who already met
    pairs, bye = pair_round(ratings, {frozenset(("c", "d"))}, {}, tie)  # type: ignore[misc]
    assert bye is None
    assert pairs == [("a", "c"), ("b", "d")]
    # without the constraint the closest pairs are taken
    pairs, _ = pair_round(ratings, set(), {}, tie)  # type: ignore[misc]
    assert pairs == [("a", "b"), ("c", "d")]


def test_odd_n_byes_go_to_lowest_rated_without_a_bye() -> None:
    ratings = {"a": 1600.0, "b": 1550.0, "c": 1500.0}
    tie = {s: i for i, s in enumerate(ratings)}
    assert pair_round(ratings, set(), {}, tie) == ([("a", "b")], "c")
    assert pair_round(ratings, set(), {"c": 1}, tie) == ([("a", "c")], "b")
    res = swiss(names(5), random_play(1), rounds=5)
    byes = [m.system_a for m in res.matches if m.system_b is None]
    assert len(byes) == 5 and len(set(byes)) == 5  # nobody sits out twice in 5 rounds


def test_stops_when_no_repeat_free_pairing_remains() -> None:
    res = swiss(names(4), random_play(3), rounds=10)
    assert res.rounds_played == 3 and res.stopped == "no_pairing"


def test_until_stable_stops_early() -> None:
    def draws(pairs: list[Pair]) -> list[MatchScore]:  # every match drawn: ratings never move
        return [MatchScore(a, b, 5.0, 5.0, 10, 0) for a, b in pairs]

    res = swiss(names(8), draws, until_stable=2)
    # ranking after round 1 repeats in rounds 2 and 3 -> stable for 2 rounds -> stop
    assert (res.stopped, res.rounds_played) == ("stable", 3)
    assert swiss(names(8), draws).rounds_played == default_rounds(8)


def test_swiss_rejects_duplicate_names() -> None:
    with pytest.raises(ValueError):
        swiss(["x", "x"], random_play(0))
