"""Swiss pairing (no repeats, backtracking, byes, rounds) and round-robin schedules."""

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragcourt.tournament.matchings import (
    BYE,
    ScheduleSearch,
    has_perfect_matching,
    matchings_in_order,
)
from ragcourt.tournament.simulate import random_play
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


def test_six_systems_play_all_default_rounds_for_30_seeds() -> None:
    """Every default round is played (greedy pairing stranded the unplayed pairs as two
    triangles and stopped at 3)."""
    for seed in range(30):
        res = swiss(names(6), random_play(seed), seed=seed)
        assert (res.rounds_played, res.stopped) == (default_rounds(6), "rounds"), seed


def test_lookahead_rejects_a_round_that_strands_two_triangles() -> None:
    # rounds 1-2 played a-d b-e c-f and a-e b-f c-d; greedy round 3 (a-f, d-b, c-e) would
    # finish the a,b,c x d,e,f pairs and leave the triangles abc, def: no 4th round
    order = ["a", "d", "f", "b", "c", "e"]
    ratings = {s: 1600.0 - 10 * i for i, s in enumerate(order)}
    tie = {s: i for i, s in enumerate(order)}
    met = {frozenset(p) for p in ["ad", "be", "cf", "ae", "bf", "cd"]}
    assert pair_round(ratings, met, {}, tie) == ([("a", "f"), ("d", "b"), ("c", "e")], None)
    drawn = pair_round(ratings, met, {}, tie, rounds_left=1)
    assert drawn == ([("a", "f"), ("d", "e"), ("b", "c")], None)
    left = {frozenset(p) for p in itertools.combinations("abcdef", 2)} - met
    left -= {frozenset(p) for p in drawn[0]}
    assert has_perfect_matching(list("abcdef"), frozenset(left))


def test_no_round_when_the_remaining_rounds_cannot_fit() -> None:
    ratings = {s: 1500.0 for s in "abcd"}
    tie = {s: i for i, s in enumerate("abcd")}
    assert pair_round(ratings, set(), {}, tie, rounds_left=3) is None  # 4 rounds > 3 possible
    assert pair_round(ratings, set(), {}, tie, rounds_left=2) is not None


def bye_fits(
    s: str, everyone: set[str], met: set[frozenset[str]], had: set[str], rounds_left: int
) -> bool:
    """Could ``s`` sit out now with ``rounds_left`` repeat-free rounds still to follow?"""
    unplayed = {frozenset(p) for p in itertools.combinations(sorted(everyone), 2)} - met
    unplayed |= {frozenset((x, BYE)) for x in everyone - had}
    nodes = [*sorted(everyone), BYE]
    rest = sorted(everyone - {s})

    def partners(top: str, others: list[str]) -> list[str]:
        return [o for o in others if frozenset((top, o)) in unplayed]

    return any(
        ScheduleSearch().can_schedule(
            nodes,
            frozenset(unplayed - {frozenset(p) for p in m} - {frozenset((s, BYE))}),
            rounds_left,
        )
        for m in matchings_in_order(rest, partners)
    )


@settings(max_examples=80, deadline=None)
@given(n=st.integers(2, 12), seed=st.integers(0, 10_000), data=st.data())
def test_swiss_plays_a_full_repeat_free_schedule(n: int, seed: int, data: st.DataObject) -> None:
    rounds = data.draw(st.integers(1, max_rounds(n)), label="rounds")
    res = swiss(names(n), random_play(seed), rounds=rounds, seed=seed)
    assert (res.rounds_played, res.stopped) == (rounds, "rounds")
    played = [frozenset((m.system_a, m.system_b)) for m in res.matches if m.system_b]
    assert len(played) == len(set(played))  # no pair repeats
    byes = [m.system_a for m in res.matches if m.system_b is None]
    assert len(byes) == len(set(byes))  # nobody sits out twice
    assert len(byes) == (rounds if n % 2 else 0)
    everyone = set(names(n))
    met: set[frozenset[str]] = set()
    for rnd in range(1, rounds + 1):  # each round is a perfect matching (+ one bye if odd)
        games = [m for m in res.matches if m.round == rnd]
        seen = [s for m in games for s in (m.system_a, m.system_b) if s]
        assert sorted(seen) == sorted(everyone)
        bye = next((m for m in games if m.system_b is None), None)
        if bye is not None:  # bye rule: lowest-rated system without a bye, unless that fails
            before = {m.system_a: m.elo_a_before for m in games}
            before |= {
                m.system_b: m.elo_b_before
                for m in games
                if m.system_b and m.elo_b_before is not None
            }
            had = set(byes[: byes.index(bye.system_a)])
            lower = [s for s in everyone - had if before[s] < bye.elo_a_before]
            for s in lower:  # each lower-rated candidate must have no feasible round
                assert not bye_fits(s, everyone, met, had, rounds - rnd), (rnd, s)
        met |= {frozenset((m.system_a, m.system_b)) for m in games if m.system_b}
    if rounds == max_rounds(n):  # the full schedule is a round-robin
        assert len(played) == n * (n - 1) // 2


def test_swiss_is_deterministic_per_seed() -> None:
    a = swiss(names(9), random_play(5), rounds=9, seed=11)
    b = swiss(names(9), random_play(5), rounds=9, seed=11)
    assert a.matches == b.matches
