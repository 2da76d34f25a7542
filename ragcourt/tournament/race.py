"""The adaptive race: rounds of fresh questions, configurations that are significantly behind
are dropped after each round, only the survivors answer and are judged next (spec §6, "Race").

Per pair (i, j), s_ij(q) ∈ [0, 1] is i's DICE score on question q (both orders combined, so
s_ij + s_ji = 1) and w_ij the mean over the n_ij questions the pair was judged on. With N
configurations, L planned rounds and error level α, each test runs at a = α / (L·(N − 1)):

    drop i after a round when, for some other configuration j,
    UCB_ij = w_ij + sqrt(ln(1/a) / (2·n_ij)) < 1/2    (one-sided Hoeffding bound).

Why it holds α under repeated looks: let b be the best configuration, E s_bj ≥ 1/2 for every j.
Each round draws fresh questions at random, so the scores of pair (b, j) are an i.i.d.
sequence however the earlier rounds went (the pairing of a round depends only on earlier
data), and the test of (b, j) after a look is Hoeffding's at level a. b is dropped only if
one of at most L·(N − 1) such tests rejects: probability ≤ L·(N − 1)·a = α (Bonferroni over
the planned looks and opponents). The rule compares with any configuration; every survivor
plays the leader, so in practice it is "significantly below the leader".

Pairing: survivors are ranked by Bradley-Terry (Elo scale) on every judged pair so far, ties
(and round 1) in a seeded random order; each survivor plays the ``opponents`` best-ranked
other survivors (pairs counted once). Stop when one survivor is left (separated from all
others), after L rounds, when the question pool cannot fill another round (rounds are always
full, so the k-th look at a pair is at n = k·round_questions, a fixed count, as the bound
needs), or before a round whose answer + judge calls would pass the call budget. Calls: one
answer per survivor and question, two judge calls (both orders) per pair and question; a full
round-robin of the same questions needs N answers and N(N − 1) judge calls per question.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from ragcourt.core.fixed_model import FixedModel
from ragcourt.tournament import bradley_terry
from ragcourt.tournament.params import RaceParams
from ragcourt.tournament.swiss import Pair

Stopped = Literal["separated", "rounds", "questions", "budget"]
RULE_NOTE = (
    "drop i when the one-sided Hoeffding upper bound of its win rate against some j, "
    "w + sqrt(ln(1/a) / (2 n)), is below 1/2, at a = alpha / (rounds x (N - 1)): Bonferroni "
    "over the planned looks and opponents, so the best configuration is dropped with "
    "probability at most alpha"
)


@dataclass(frozen=True)
class PairOutcome:
    """One pair judged on one round's questions: a's summed score over ``n`` valid questions
    (b's is ``n`` − ``score_a``), and ``errors`` failed judgements (excluded, never a tie)."""

    system_a: str
    system_b: str
    score_a: float
    n: int
    errors: int = 0


#: plays one round: (round number, pairs, the round's question ids) -> one outcome per pair
PlayPairs = Callable[[int, list[Pair], list[str]], list[PairOutcome]]


class RaceExit(FixedModel):
    """When and why a configuration left: its win rate against ``against`` and the bound."""

    system: str
    round: int
    against: str
    questions: int
    win_rate: float
    upper_bound: float
    reason: str


class RaceRound(FixedModel):
    """One round: who played, how many pairs and calls, who left, the leader after it."""

    round: int
    questions: int
    survivors: list[str]  # at the start of the round (they answer its questions)
    pairs: int
    answer_calls: int
    judge_calls: int
    dropped: list[str]
    leader: str


class RaceStanding(FixedModel):
    """A survivor: its Bradley-Terry rating and its win rate against the leader, with the
    race's simultaneous interval (per-test level a, two-sided) and the same on the Elo scale."""

    system: str
    bt: float | None
    questions_vs_leader: int
    win_rate_vs_leader: float | None
    win_rate_lo: float | None
    win_rate_hi: float | None
    elo_gap_lo: float | None
    elo_gap_hi: float | None


class RaceCalls(FixedModel):
    """Answer calls (system × question) and judge calls (pair × question × 2 orders)."""

    answers: int
    judge: int
    total: int


class RaceResult(FixedModel):
    """The outcome: winner (None when not separated), leader, survivors, exits, rounds, calls."""

    winner: str | None
    leader: str
    stopped: Stopped
    n_systems: int
    alpha: float
    per_test_alpha: float
    rounds_planned: int
    rounds_played: int
    questions_used: int
    survivors: list[RaceStanding]
    exits: list[RaceExit]
    rounds: list[RaceRound]
    calls: RaceCalls
    round_robin_calls: RaceCalls
    calls_fraction: float | None
    rule_note: str


def per_test_alpha(alpha: float, rounds: int, n_systems: int) -> float:
    """a = α / (L·(N − 1))."""
    return alpha / (rounds * max(1, n_systems - 1))


def hoeffding_radius(n: int | np.ndarray, a: float) -> np.ndarray:
    """sqrt(ln(1/a) / (2n)) (inf where n = 0)."""
    n_arr = np.asarray(n, dtype=float)
    with np.errstate(divide="ignore"):
        return np.sqrt(math.log(1.0 / a) / (2.0 * n_arr))


def elo_of(p: float | None) -> float | None:
    """400·log10(p / (1 − p)): the Elo gap of a win rate (None outside (0, 1))."""
    if p is None or not 0.0 < p < 1.0:
        return None
    return 400.0 * math.log10(p / (1.0 - p))


@dataclass
class RaceState:
    """Accumulated pair scores: ``wins[i, j]`` = Σ s_ij, ``counts[i, j]`` = n_ij (symmetric)."""

    systems: list[str]
    alpha: float
    rounds_planned: int
    seed: int = 0
    wins: np.ndarray = field(init=False)
    counts: np.ndarray = field(init=False)
    alive: list[bool] = field(init=False)
    tie_order: np.ndarray = field(init=False)
    _bt: np.ndarray | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        n = len(self.systems)
        self.wins = np.zeros((n, n))
        self.counts = np.zeros((n, n), dtype=np.int64)
        self.alive = [True] * n
        self.tie_order = np.random.default_rng(self.seed).permutation(n)

    @property
    def a(self) -> float:
        return per_test_alpha(self.alpha, self.rounds_planned, len(self.systems))

    def survivors(self) -> list[str]:
        return [s for s, ok in zip(self.systems, self.alive, strict=True) if ok]

    def record(self, outcomes: Sequence[PairOutcome]) -> None:
        """Add one round's pair outcomes."""
        idx = {s: i for i, s in enumerate(self.systems)}
        for o in outcomes:
            i, j = idx[o.system_a], idx[o.system_b]
            self.wins[i, j] += o.score_a
            self.wins[j, i] += o.n - o.score_a
            self.counts[i, j] += o.n
            self.counts[j, i] += o.n
        self._bt = None

    def ratings(self) -> np.ndarray:
        """Bradley-Terry strengths (Elo scale, anchor 1500) on all judged pairs; NaN unrated
        (refitted only after new outcomes)."""
        if self._bt is None:
            n = len(self.systems)
            ia, ib = np.triu_indices(n, k=1)
            played = self.counts[ia, ib] > 0
            self._bt = bradley_terry.fit(
                ia[played], ib[played], self.wins[ia, ib][played], self.wins[ib, ia][played], n
            )
        return self._bt

    def ranked(self) -> list[int]:
        """Survivor indices, best first: BT rating (unrated last), ties by the seeded order."""
        bt = np.nan_to_num(self.ratings(), nan=-np.inf)
        alive = [i for i, ok in enumerate(self.alive) if ok]
        return sorted(alive, key=lambda i: (-bt[i], int(self.tie_order[i])))


def pairings(state: RaceState, opponents: int) -> list[Pair]:
    """Each survivor against the ``opponents`` best-ranked other survivors, each pair once
    (the better-ranked system first)."""
    order = state.ranked()
    pos = {i: k for k, i in enumerate(order)}
    seen: set[tuple[int, int]] = set()
    out: list[Pair] = []
    for i in order:
        for j in [j for j in order if j != i][:opponents]:
            a, b = (i, j) if pos[i] < pos[j] else (j, i)
            if (a, b) not in seen:
                seen.add((a, b))
                out.append((state.systems[a], state.systems[b]))
    return out


def eliminate(state: RaceState, round_no: int) -> list[RaceExit]:
    """Drop every survivor whose UCB against some configuration is below 1/2 (module doc),
    all judged on the data after this round; the best-ranked survivor stays if the rule would
    drop them all (a preference cycle)."""
    n = state.counts
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(n > 0, state.wins / np.maximum(n, 1), np.nan)
    ucb = np.where(n > 0, rate + hoeffding_radius(n, state.a), np.inf)
    exits: list[RaceExit] = []
    for i in [i for i, ok in enumerate(state.alive) if ok]:
        j = int(np.argmin(np.where(np.arange(len(n)) == i, np.inf, ucb[i])))
        if ucb[i, j] < 0.5:
            exits.append(
                RaceExit(
                    system=state.systems[i],
                    round=round_no,
                    against=state.systems[j],
                    questions=int(n[i, j]),
                    win_rate=float(rate[i, j]),
                    upper_bound=float(ucb[i, j]),
                    reason=(
                        f"win rate {rate[i, j]:.3f} against {state.systems[j]} over "
                        f"{int(n[i, j])} questions: upper bound {ucb[i, j]:.3f} < 0.5"
                    ),
                )
            )
    if len(exits) == sum(state.alive):  # never drop every survivor
        keep = state.systems[state.ranked()[0]]
        exits = [e for e in exits if e.system != keep]
    for e in exits:
        state.alive[state.systems.index(e.system)] = False
    return exits


def standings(state: RaceState) -> list[RaceStanding]:
    """Survivors best first, each against the leader with the race's two-sided interval
    (radius at the per-test level a, so the intervals hold simultaneously with the rule)."""
    order = state.ranked()
    bt = state.ratings()
    lead = order[0]
    out = []
    for i in order:
        n = int(state.counts[i, lead])
        w = float(state.wins[i, lead] / n) if n and i != lead else None
        r = float(hoeffding_radius(n, state.a / 2)) if w is not None else None
        lo = max(0.0, w - r) if w is not None and r is not None else None
        hi = min(1.0, w + r) if w is not None and r is not None else None
        out.append(
            RaceStanding(
                system=state.systems[i],
                bt=None if np.isnan(bt[i]) else float(bt[i]),
                questions_vs_leader=n if i != lead else 0,
                win_rate_vs_leader=w,
                win_rate_lo=lo,
                win_rate_hi=hi,
                elo_gap_lo=elo_of(lo),
                elo_gap_hi=elo_of(hi),
            )
        )
    return out


def round_calls(n_survivors: int, n_pairs: int, n_questions: int) -> tuple[int, int]:
    """(answer calls, judge calls) of one round: survivors × questions, 2 × pairs × questions."""
    return n_survivors * n_questions, 2 * n_pairs * n_questions


def round_robin_calls(n_systems: int, n_questions: int) -> RaceCalls:
    """Every system answers every question; every pair is judged in both orders."""
    answers = n_systems * n_questions
    judge = n_systems * (n_systems - 1) * n_questions
    return RaceCalls(answers=answers, judge=judge, total=answers + judge)


def run_race(
    systems: Sequence[str], questions: Sequence[str], play: PlayPairs, cfg: RaceParams
) -> RaceResult:
    """The race (module doc) over ``questions`` drawn in a seeded random order; ``play``
    judges each round's pairs on that round's questions (answering them first as needed)."""
    if len(systems) < 2 or len(set(systems)) != len(systems):
        raise ValueError(f"a race needs at least 2 distinct systems, got {list(systems)}")
    rng = np.random.default_rng(cfg.seed)
    pool = [questions[k] for k in rng.permutation(len(questions))]
    state = RaceState(list(systems), cfg.alpha, cfg.rounds, cfg.seed)
    history: list[RaceRound] = []
    exits: list[RaceExit] = []
    answers = judge = used = 0
    stopped: Stopped = "rounds"
    for r in range(1, cfg.rounds + 1):
        survivors = state.survivors()
        batch = pool[used : used + cfg.round_questions]
        if len(batch) < cfg.round_questions:  # only full rounds: each look at a pair is at
            stopped = "questions"  # n = k x round_questions, as the error bound counts them
            break
        pairs = pairings(state, cfg.opponents)
        a_calls, j_calls = round_calls(len(survivors), len(pairs), len(batch))
        if cfg.max_calls is not None and answers + judge + a_calls + j_calls > cfg.max_calls:
            stopped = "budget"
            break
        state.record(play(r, pairs, batch))
        answers, judge, used = answers + a_calls, judge + j_calls, used + len(batch)
        dropped = eliminate(state, r)
        exits += dropped
        history.append(
            RaceRound(
                round=r,
                questions=len(batch),
                survivors=survivors,
                pairs=len(pairs),
                answer_calls=a_calls,
                judge_calls=j_calls,
                dropped=[e.system for e in dropped],
                leader=state.systems[state.ranked()[0]],
            )
        )
        if len(state.survivors()) == 1:
            stopped = "separated"
            break
    return _result(
        state,
        cfg,
        stopped,
        history,
        exits,
        used,
        RaceCalls(answers=answers, judge=judge, total=answers + judge),
    )


def _result(
    state: RaceState,
    cfg: RaceParams,
    stopped: Stopped,
    history: list[RaceRound],
    exits: list[RaceExit],
    used: int,
    calls: RaceCalls,
) -> RaceResult:
    rr = round_robin_calls(len(state.systems), used)
    table = standings(state)
    return RaceResult(
        winner=table[0].system if stopped == "separated" else None,
        leader=table[0].system,
        stopped=stopped,
        n_systems=len(state.systems),
        alpha=cfg.alpha,
        per_test_alpha=state.a,
        rounds_planned=cfg.rounds,
        rounds_played=len(history),
        questions_used=used,
        survivors=table,
        exits=exits,
        rounds=history,
        calls=calls,
        round_robin_calls=rr,
        calls_fraction=calls.total / rr.total if rr.total else None,
        rule_note=RULE_NOTE,
    )


def race_lines(result: RaceResult) -> list[str]:
    """What ``ragcourt race`` prints: the outcome, the survivors with their interval against
    the leader, when and why each configuration left, and the calls against round-robin
    (system names with control characters escaped, one line each)."""
    from ragcourt.core.errors import one_line

    def rate(s: RaceStanding) -> str:
        if s.win_rate_vs_leader is None:
            return "leader"
        return (
            f"win rate vs leader {s.win_rate_vs_leader:.3f} "
            f"[{s.win_rate_lo:.3f}, {s.win_rate_hi:.3f}] over {s.questions_vs_leader} questions"
        )

    head = (
        f"winner: {one_line(result.winner)}"
        if result.winner is not None
        else f"no winner separated; leader: {one_line(result.leader)}"
    )
    out = [
        f"{head} (stopped: {result.stopped}; {result.rounds_played} of {result.rounds_planned} "
        f"rounds, {result.questions_used} questions, alpha {result.alpha:g})"
    ]
    out += [f"survivor {one_line(s.system)}: {rate(s)}" for s in result.survivors]
    out += [
        f"left in round {e.round}: {one_line(e.system)}: {one_line(e.reason)}" for e in result.exits
    ]
    c, rr = result.calls, result.round_robin_calls
    frac = f"{result.calls_fraction:.1%}" if result.calls_fraction is not None else "–"
    out.append(
        f"calls: {c.total} ({c.answers} answers + {c.judge} judge) against {rr.total} "
        f"({rr.answers} + {rr.judge}) for a round-robin of the same questions: {frac}"
    )
    return out
