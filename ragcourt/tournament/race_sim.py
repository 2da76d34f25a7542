"""The race's stopping rule on the tournament simulator (:mod:`ragcourt.tournament.simulate`):
known latent strengths, the stochastic oracle, the real DICE scoring and the real race code.

Each simulated race draws one oracle over ``rounds · round_questions`` questions (fresh
questions each round) and plays :func:`ragcourt.tournament.race.run_race` on it. The true best
is the system of highest latent strength (the first of them when several tie: with ties each
of them is a best, so the rule's guarantee holds for it). Reported per race: whether the true
best was dropped (the error the rule bounds by α), the winner, whether the leader is the true
best, and the calls against a round-robin of the same questions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragcourt.tournament.params import RaceParams
from ragcourt.tournament.race import PairOutcome, run_race
from ragcourt.tournament.simulate import Oracle, SimConfig
from ragcourt.tournament.swiss import Pair


@dataclass(frozen=True)
class Scenario:
    """A field of systems: explicit strengths, or N(0, ``strength_sd``) Elo when None."""

    name: str
    n_systems: int
    strengths: tuple[float, ...] | None = None
    strength_sd: float = 200.0


def tied_top(n: int, tied: int, gap: float) -> tuple[float, ...]:
    """``tied`` systems at 0 Elo, the rest ``gap``, 2·``gap``, ... below."""
    return tuple([0.0] * tied + [-gap * (k + 1) for k in range(n - tied)])


def simulate_race(scenario: Scenario, cfg: RaceParams, seed: int) -> dict[str, Any]:
    """One race on a fresh seeded oracle (module doc)."""
    n_q = cfg.rounds * cfg.round_questions
    sim = SimConfig(
        n_systems=scenario.n_systems,
        n_questions=n_q,
        strength_sd=scenario.strength_sd,
        strengths=scenario.strengths,
        seed=seed,
    )
    oracle = Oracle(sim)
    qid = {f"q{k:05d}": k for k in range(n_q)}

    def play(_round: int, pairs: list[Pair], questions: list[str]) -> list[PairOutcome]:
        idx = np.array([qid[q] for q in questions])
        return [
            PairOutcome(a, b, float(oracle.question_scores(a, b, idx).sum()), len(idx))
            for a, b in pairs
        ]

    result = run_race(oracle.names, list(qid), play, cfg.model_copy(update={"seed": seed}))
    best = oracle.names[int(np.argmax(oracle.theta))]
    dropped = {e.system for e in result.exits}
    return {
        "scenario": scenario.name,
        "seed": seed,
        "best": best,
        "dropped_best": best in dropped,
        "winner": result.winner,
        "leader_is_best": result.leader == best,
        "separated": result.winner is not None,
        "rounds": result.rounds_played,
        "survivors": len(result.survivors),
        "calls_fraction": result.calls_fraction,
        "judge_fraction": result.calls.judge / result.round_robin_calls.judge,
    }


def sweep(scenario: Scenario, cfg: RaceParams, seeds: Sequence[int]) -> list[dict[str, Any]]:
    """:func:`simulate_race` for every seed."""
    return [simulate_race(scenario, cfg, s) for s in seeds]


def clopper_pearson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Exact binomial interval of a rate k/n (scipy's beta quantiles)."""
    from scipy.stats import beta

    a = (1 - level) / 2
    lo = 0.0 if k == 0 else float(beta.ppf(a, k, n - k + 1))
    hi = 1.0 if k == n else float(beta.ppf(1 - a, k + 1, n - k))
    return lo, hi


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Rate of dropping the true best (with its exact 95% interval) and the means."""
    n = len(rows)
    k = sum(r["dropped_best"] for r in rows)
    lo, hi = clopper_pearson(k, n)
    return {
        "races": n,
        "dropped_best": k,
        "drop_rate": k / n,
        "drop_rate_lo": lo,
        "drop_rate_hi": hi,
        "separated": float(np.mean([r["separated"] for r in rows])),
        "leader_is_best": float(np.mean([r["leader_is_best"] for r in rows])),
        "rounds": float(np.mean([r["rounds"] for r in rows])),
        "survivors": float(np.mean([r["survivors"] for r in rows])),
        "calls_fraction": float(np.mean([r["calls_fraction"] for r in rows])),
        "judge_fraction": float(np.mean([r["judge_fraction"] for r in rows])),
    }
