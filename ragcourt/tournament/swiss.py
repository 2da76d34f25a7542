"""Swiss and round-robin schedules with Elo (spec §6, DICE Algorithm 1).

Swiss: every system starts at ``initial`` Elo. Each round sorts systems by rating (ties by
a seeded random order, so round 1 is a seeded random draw) and pairs the highest unpaired
system with the closest-rated unpaired system it has not met, backtracking through the
matchings in that order. A candidate round is accepted only if the pairs still unplayed can
form every remaining scheduled round (look-ahead: ``matchings.ScheduleSearch``), so the
scheduled rounds are always played when a repeat-free schedule exists; when the first greedy
candidate passes (the usual case) the round is that greedy pairing. The look-ahead is exact
for N <= 16 (``LOOKAHEAD_MAX_SYSTEMS``); above that a round only has to be pairable itself and
the tournament may stop early with ``stopped="no_pairing"``.

Bye rule (odd N): a bye is a match against a dummy node, so it is never repeated: the bye goes
to the lowest-rated system that has not sat out yet (the next lowest if the look-ahead rejects
every round with that bye), and a second bye never goes to a system that already had one. The
bye system's rating does not change. N rounds give every system exactly one bye, and no
repeat-free round exists after that.

Rounds: ``ceil(log2 N) + 1`` by default (4 for N = 8, i.e. 16 matches against 28 for
round-robin), at most ``max_rounds(N)``; optionally stop early once the Elo ranking has not
changed for ``until_stable`` consecutive rounds. ``stopped``: ``"rounds"`` (all requested
rounds played), ``"stable"``, or ``"no_pairing"`` (no repeat-free round is left: more rounds
were requested than ``max_rounds(N)``, or N > 16 without look-ahead). Ratings are updated
after every match (pairs within a round are disjoint, so the order inside a round does not
matter).

Round-robin: all N(N-1)/2 pairs, scheduled by the circle method into rounds of disjoint
pairs, with the same Elo updates (the "w/o Swiss" figure of DICE).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ragcourt.tournament.elo import update
from ragcourt.tournament.matchings import (
    BYE,
    LOOKAHEAD_MAX_SYSTEMS,
    Edge,
    ScheduleSearch,
    matchings_in_order,
)
from ragcourt.tournament.matchings import (
    Pair as Pair,  # re-exported: the tournament modules import Pair from here
)


@dataclass(frozen=True)
class MatchScore:
    """A judged match: summed per-question scores over ``n`` valid questions."""

    system_a: str
    system_b: str
    s_a: float
    s_b: float
    n: int
    n_errors: int


PlayRound = Callable[[list[Pair]], list[MatchScore]]


@dataclass(frozen=True)
class MatchRecord:
    round: int
    system_a: str
    system_b: str | None  # None: a bye for system_a
    score_a: float
    score_b: float
    n_questions: int
    n_errors: int
    elo_a_before: float
    elo_b_before: float | None
    expected_a: float | None
    k: float
    elo_a_after: float
    elo_b_after: float | None


@dataclass
class TournamentResult:
    ratings: dict[str, float]
    matches: list[MatchRecord] = field(default_factory=list)
    rounds_played: int = 0
    stopped: str = ""

    @property
    def schedule(self) -> list[list[Pair]]:
        """The played pairs per round (byes left out), for replaying under resampling."""
        out: list[list[Pair]] = [[] for _ in range(self.rounds_played)]
        for m in self.matches:
            if m.system_b is not None:
                out[m.round - 1].append((m.system_a, m.system_b))
        return out

    def ranking(self) -> list[str]:
        return ranking(self.ratings)


def ranking(ratings: dict[str, float]) -> list[str]:
    """Systems by rating, best first (name breaks exact ties)."""
    return sorted(ratings, key=lambda s: (-ratings[s], s))


def default_rounds(n_systems: int) -> int:
    """ceil(log2 N) + 1 (4 for N = 8), at most the rounds a repeat-free schedule allows."""
    if n_systems < 2:
        return 0
    return min(math.ceil(math.log2(n_systems)) + 1, max_rounds(n_systems))


def max_rounds(n_systems: int) -> int:
    """Rounds before every pair has met: N − 1 for even N, N for odd N (one bye each)."""
    return n_systems - 1 if n_systems % 2 == 0 else n_systems


def _unplayed(
    systems: Sequence[str], met: set[frozenset[str]], byes: dict[str, int]
) -> tuple[list[str], frozenset[Edge]]:
    """Nodes and edges of the unplayed graph: pairs not yet met; odd N adds :data:`BYE`,
    adjacent to every system that has not sat out yet."""
    nodes = list(systems)
    edges = {frozenset(p) for p in itertools.combinations(nodes, 2)} - met
    if len(nodes) % 2:
        edges |= {frozenset((s, BYE)) for s in nodes if not byes.get(s, 0)}
        nodes.append(BYE)
    return nodes, frozenset(edges)


def pair_round(
    ratings: dict[str, float],
    met: set[frozenset[str]],
    byes: dict[str, int],
    tiebreak: dict[str, int],
    rounds_left: int = 0,
    search: ScheduleSearch | None = None,
) -> tuple[list[Pair], str | None] | None:
    """One Swiss round: (pairs, bye system or None), or None if no repeat-free round exists
    that still leaves ``rounds_left`` repeat-free rounds to follow.

    Candidates come in Swiss order: the bye (odd N) to the lowest-rated system that has not
    sat out yet, then the top-rated unpaired system against the closest-rated one it has not
    met, backtracking; the first candidate after which ``rounds_left`` more rounds still fit
    (:class:`ScheduleSearch`) is taken.
    """
    order = sorted(ratings, key=lambda s: (-ratings[s], tiebreak[s]))
    nodes, unplayed = _unplayed(order, met, byes)
    search = search or ScheduleSearch()

    def partners(top: str, rest: list[str]) -> list[str]:
        options = [o for o in rest if frozenset((top, o)) in unplayed]
        return sorted(options, key=lambda o: abs(ratings[top] - ratings[o]))  # stable

    bye_options: list[str | None] = [None]
    if len(order) % 2:
        bye_options = [s for s in reversed(order) if frozenset((s, BYE)) in unplayed]
    for bye in bye_options:
        playing = [s for s in order if s != bye]
        for pairs in matchings_in_order(playing, partners):
            used = {frozenset(p) for p in pairs} | ({frozenset((bye, BYE))} if bye else set())
            if search.can_schedule(nodes, unplayed - used, rounds_left):
                return pairs, bye
    return None


def _play_rounds(
    systems: Sequence[str],
    next_round: Callable[[dict[str, float], int], tuple[list[Pair], str | None] | None],
    play: PlayRound,
    n_rounds: int,
    k: float,
    upset_weighting: bool,
    initial: float,
    until_stable: int = 0,
) -> TournamentResult:
    result = TournamentResult(ratings={s: float(initial) for s in systems})
    ratings = result.ratings
    stable_for, previous = 0, None
    result.stopped = "rounds"
    for rnd in range(1, n_rounds + 1):
        drawn = next_round(ratings, rnd)
        if drawn is None:
            result.stopped = "no_pairing"
            break
        pairs, bye = drawn
        for m in play(pairs):
            up = update(ratings[m.system_a], ratings[m.system_b], m.s_a, m.s_b, k, upset_weighting)
            result.matches.append(
                MatchRecord(
                    rnd,
                    m.system_a,
                    m.system_b,
                    m.s_a,
                    m.s_b,
                    m.n,
                    m.n_errors,
                    ratings[m.system_a],
                    ratings[m.system_b],
                    up.expected_a,
                    up.k,
                    up.r_a,
                    up.r_b,
                )
            )
            ratings[m.system_a], ratings[m.system_b] = up.r_a, up.r_b
        if bye is not None:
            r = ratings[bye]
            result.matches.append(
                MatchRecord(rnd, bye, None, 0.0, 0.0, 0, 0, r, None, None, 0.0, r, None)
            )
        result.rounds_played = rnd
        order = ranking(ratings)
        stable_for = stable_for + 1 if order == previous else 0
        previous = order
        if until_stable and stable_for >= until_stable:
            result.stopped = "stable"
            break
    return result


def swiss(
    systems: Sequence[str],
    play: PlayRound,
    rounds: int | None = None,
    k: float = 32.0,
    upset_weighting: bool = True,
    initial: float = 1500.0,
    until_stable: int = 0,
    seed: int = 0,
) -> TournamentResult:
    """Run a Swiss tournament; ``play`` judges a round's pairs (one batch per round).

    ``rounds=None`` means ``default_rounds(N)``, or ``max_rounds(N)`` when ``until_stable``
    is set (the stability rule then decides when to stop).
    """
    if len(set(systems)) != len(systems):
        raise ValueError("system names must be unique")
    if rounds is None:
        rounds = max_rounds(len(systems)) if until_stable else default_rounds(len(systems))
    rng = np.random.default_rng(seed)
    tiebreak = {s: int(i) for s, i in zip(systems, rng.permutation(len(systems)), strict=True)}
    met: set[frozenset[str]] = set()
    byes: dict[str, int] = {}
    search = ScheduleSearch()
    # the rounds a repeat-free schedule can hold; look-ahead keeps all of them playable
    target = min(rounds, max_rounds(len(systems)))
    lookahead = len(systems) <= LOOKAHEAD_MAX_SYSTEMS

    def next_round(ratings: dict[str, float], rnd: int) -> tuple[list[Pair], str | None] | None:
        left = max(0, target - rnd) if lookahead else 0
        drawn = pair_round(ratings, met, byes, tiebreak, left, search)
        if drawn is not None:
            pairs, bye = drawn
            met.update(frozenset(p) for p in pairs)
            if bye is not None:
                byes[bye] = byes.get(bye, 0) + 1
        return drawn

    return _play_rounds(
        systems, next_round, play, rounds, k, upset_weighting, initial, until_stable
    )


def round_robin_schedule(systems: Sequence[str]) -> list[list[Pair]]:
    """Circle-method schedule: N−1 (even N) or N (odd N) rounds covering all N(N−1)/2 pairs."""
    slots: list[str | None] = list(systems)
    if len(slots) % 2:
        slots.append(None)
    n = len(slots)
    schedule: list[list[Pair]] = []
    for _ in range(n - 1):
        pairs = [(slots[i], slots[n - 1 - i]) for i in range(n // 2)]
        schedule.append([(a, b) for a, b in pairs if a is not None and b is not None])
        slots = [slots[0], slots[-1], *slots[1:-1]]
    return schedule


def round_robin(
    systems: Sequence[str],
    play: PlayRound,
    k: float = 32.0,
    upset_weighting: bool = True,
    initial: float = 1500.0,
) -> TournamentResult:
    """Every pair once, in circle-method rounds, with the same Elo updates as the Swiss run."""
    schedule = round_robin_schedule(systems)
    everyone = set(systems)

    def next_round(_ratings: dict[str, float], rnd: int) -> tuple[list[Pair], str | None]:
        pairs = schedule[rnd - 1]
        sitting_out = everyone.difference(*map(set, pairs)) if pairs else everyone
        return pairs, (next(iter(sitting_out)) if len(sitting_out) == 1 else None)

    return _play_rounds(systems, next_round, play, len(schedule), k, upset_weighting, initial)
