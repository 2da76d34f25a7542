"""Simulation mode for the ranking machinery alone: known latent strengths, stochastic oracle.

Systems s_i have latent Elo-scale strengths θ_i ~ N(0, ``strength_sd``), or evenly spaced
``spacing`` Elo apart when that is set (a DICE-like field of well-separated systems).
Each answer has a quality x_iq = θ_i·ln10/400 + ε_iq (ε ~ N(0, ``question_sd``), logits),
so systems differ per question. For a presentation (first i, second j) of question q the
oracle sees d = x_iq − x_jq + ``position_bias`` + η (η ~ N(0, ``judge_sd``), drawn once per
order) and answers with the ordered-logit probabilities of
:func:`ragcourt.tournament.scoring.ordered_logit` (scale 1, cut point ``tie_band``). Both orders are
combined and scored by the real DICE code (combine, margin rule), then the real Swiss /
round-robin / BT code ranks the systems. Reported: Kendall τ-b (scipy) against θ for the
Swiss Elo ranking, BT on the Swiss matches only, the round-robin ranking (BT on all pairs)
and the round-robin Elo, plus matches and judge calls used.

``python -m ragcourt.tournament.simulate --n 8 16 --seeds 10`` prints mean and spread per N.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy.stats import kendalltau

from ragcourt.tournament import bradley_terry
from ragcourt.tournament.scoring import ordered_logit, score_arrays
from ragcourt.tournament.swiss import (
    MatchScore,
    Pair,
    PlayRound,
    TournamentResult,
    round_robin,
    swiss,
)


def random_play(seed: int, n_q: int = 10) -> PlayRound:
    """A judge of no knowledge: each match's score for the first system is uniform on
    0..``n_q`` questions (seeded), the rest go to the second; no ties, no failed calls."""
    rng = np.random.default_rng(seed)

    def play(pairs: list[Pair]) -> list[MatchScore]:
        out = []
        for a, b in pairs:
            s = float(rng.integers(0, n_q + 1))
            out.append(MatchScore(a, b, s, n_q - s, n_q, 0))
        return out

    return play


@dataclass(frozen=True)
class SimConfig:
    n_systems: int
    n_questions: int = 50
    strength_sd: float = 200.0
    spacing: float | None = None
    strengths: tuple[float, ...] | None = None  # explicit latent Elo strengths (one per system)
    question_sd: float = 1.0
    judge_sd: float = 0.5
    tie_band: float = 0.5
    position_bias: float = 0.3
    margin: float = 0.1
    rounds: int | None = None
    k: float = 32.0
    upset_weighting: bool = True
    seed: int = 0


class Oracle:
    """Stochastic pairwise judge over latent strengths; each (pair, question, order) is drawn
    once, so Swiss and round-robin see the same judgements (as the stage's memo does)."""

    def __init__(self, cfg: SimConfig):
        rng = np.random.default_rng(cfg.seed)
        n, q = cfg.n_systems, cfg.n_questions
        self.cfg = cfg
        self.names = [f"S{i:02d}" for i in range(n)]
        self.index = {s: i for i, s in enumerate(self.names)}
        if cfg.strengths is not None:
            self.theta = np.asarray(cfg.strengths, dtype=float)
        elif cfg.spacing is None:
            self.theta = rng.normal(0.0, cfg.strength_sd, n)
        else:  # evenly spaced, in a seeded random order of names
            self.theta = rng.permutation(cfg.spacing * (np.arange(n) - (n - 1) / 2))
        self.quality = self.theta[:, None] * math.log(10) / 400 + rng.normal(
            0, cfg.question_sd, (n, q)
        )
        self.noise = rng.normal(0.0, cfg.judge_sd, (n, n, q))  # [first, second, question]
        self.judged: set[frozenset[str]] = set()

    def _order_probs(self, i: int, j: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        d = self.quality[i] - self.quality[j] + self.cfg.position_bias + self.noise[i, j]
        return ordered_logit(d, 1.0, self.cfg.tie_band)

    def question_scores(self, a: str, b: str, questions: npt.ArrayLike) -> np.ndarray:
        """a's DICE score on each of ``questions`` (indices) against b, both orders combined
        and scored by the real code; b's is 1 minus it."""
        q = np.asarray(questions, dtype=np.int64)
        i, j = self.index[a], self.index[b]
        ab, ba = self._order_probs(i, j), self._order_probs(j, i)
        p_a, p_b, p_t = (ab[0] + ba[1]) / 2, (ab[1] + ba[0]) / 2, (ab[2] + ba[2]) / 2
        s_a, _, _, _ = score_arrays(p_a[q], p_b[q], p_t[q], self.cfg.margin)
        self.judged.add(frozenset((a, b)))
        return np.asarray(s_a, dtype=float)

    def play(self, pairs: list[Pair]) -> list[MatchScore]:
        out = []
        for a, b in pairs:
            i, j = self.index[a], self.index[b]
            ab, ba = self._order_probs(i, j), self._order_probs(j, i)
            p_a, p_b, p_t = (ab[0] + ba[1]) / 2, (ab[1] + ba[0]) / 2, (ab[2] + ba[2]) / 2
            s_a, s_b, _, _ = score_arrays(p_a, p_b, p_t, self.cfg.margin)
            self.judged.add(frozenset((a, b)))
            q = self.cfg.n_questions
            out.append(MatchScore(a, b, float(s_a.sum()), float(s_b.sum()), q, 0))
        return out


def _bt_from_matches(result: TournamentResult, names: list[str]) -> np.ndarray:
    idx = {s: i for i, s in enumerate(names)}
    played = [(m, m.system_b) for m in result.matches if m.system_b is not None]
    return bradley_terry.fit(
        [idx[m.system_a] for m, _ in played],
        [idx[b] for _, b in played],
        [m.score_a for m, _ in played],
        [m.score_b for m, _ in played],
        len(names),
    )


def _tau(truth: npt.ArrayLike, est: npt.ArrayLike) -> float:
    return float(kendalltau(truth, est).statistic)


def simulate(cfg: SimConfig) -> dict[str, Any]:
    """One simulated tournament: taus against the truth and comparisons used."""
    oracle = Oracle(cfg)
    names = oracle.names
    sw = swiss(
        names, oracle.play, cfg.rounds, k=cfg.k, upset_weighting=cfg.upset_weighting, seed=cfg.seed
    )
    rr = round_robin(names, oracle.play, k=cfg.k, upset_weighting=cfg.upset_weighting)
    sw_elo = [sw.ratings[s] for s in names]
    rr_bt = _bt_from_matches(rr, names)
    sw_bt = _bt_from_matches(sw, names)
    n = cfg.n_systems
    swiss_matches = sum(m.system_b is not None for m in sw.matches)
    return {
        "n_systems": n,
        "seed": cfg.seed,
        "rounds": sw.rounds_played,
        "swiss_matches": swiss_matches,
        "rr_matches": n * (n - 1) // 2,
        "swiss_judge_calls": 2 * cfg.n_questions * swiss_matches,
        "rr_judge_calls": 2 * cfg.n_questions * n * (n - 1) // 2,
        "tau_swiss": _tau(oracle.theta, sw_elo),
        "tau_swiss_bt": _tau(oracle.theta, sw_bt),
        "tau_rr": _tau(oracle.theta, rr_bt),
        "tau_rr_elo": _tau(oracle.theta, [rr.ratings[s] for s in names]),
        "tau_swiss_vs_rr": _tau(sw_elo, rr_bt),
        "same_ranking": sw.ranking() == [names[i] for i in np.argsort(-rr_bt, kind="stable")],
    }


def sweep(ns: Sequence[int], seeds: int, **cfg: Any) -> list[dict[str, Any]]:
    """``simulate`` for every N and seed 0..seeds-1."""
    return [simulate(SimConfig(n_systems=n, seed=s, **cfg)) for n in ns for s in range(seeds)]


def summarise(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Mean and standard deviation per N of the taus; comparisons (constant per N)."""
    out = []
    for n in sorted({r["n_systems"] for r in rows}):
        rs = [r for r in rows if r["n_systems"] == n]
        entry: dict[str, Any] = {"n_systems": n, "seeds": len(rs)}
        for key in ("rounds", "swiss_matches", "rr_matches", "swiss_judge_calls", "rr_judge_calls"):
            entry[key] = float(np.mean([r[key] for r in rs]))
        for key in ("tau_swiss", "tau_swiss_bt", "tau_rr", "tau_rr_elo", "tau_swiss_vs_rr"):
            vals = np.array([r[key] for r in rs])
            entry[key] = float(vals.mean())
            entry[f"{key}_sd"] = float(vals.std(ddof=1)) if len(vals) > 1 else 0.0
        entry["same_ranking"] = float(np.mean([r["same_ranking"] for r in rs]))
        out.append(entry)
    return out


def format_table(summary: list[dict[str, Any]]) -> str:
    head = (
        f"{'N':>4} {'seeds':>5} {'rounds':>6} {'swiss':>6} {'RR':>6} {'saved':>6}  "
        f"{'tau Swiss Elo':>14} {'tau Swiss BT':>13} {'tau RR (BT)':>12} {'tau RR Elo':>12} "
        f"{'tau Swiss~RR':>13} {'Swiss=RR':>8}"
    )
    lines = [head]
    for e in summary:
        saved = 1 - e["swiss_matches"] / e["rr_matches"]

        def pm(key: str, e: dict[str, Any] = e) -> str:
            return f"{e[key]:.3f}±{e[key + '_sd']:.3f}"

        lines.append(
            f"{e['n_systems']:>4} {e['seeds']:>5} {e['rounds']:>6.0f} {e['swiss_matches']:>6.0f} "
            f"{e['rr_matches']:>6.0f} {saved:>6.1%}  {pm('tau_swiss'):>14} "
            f"{pm('tau_swiss_bt'):>13} {pm('tau_rr'):>12} {pm('tau_rr_elo'):>12} "
            f"{pm('tau_swiss_vs_rr'):>13} {e['same_ranking']:>8.0%}"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m ragcourt.tournament.simulate", description=__doc__)
    ap.add_argument("--n", type=int, nargs="+", default=[8, 16, 32, 64])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--questions", type=int, default=SimConfig.n_questions)
    ap.add_argument("--strength-sd", type=float, default=SimConfig.strength_sd)
    ap.add_argument("--spacing", type=float, default=None, help="evenly spaced strengths (Elo)")
    ap.add_argument("--judge-sd", type=float, default=SimConfig.judge_sd)
    args = ap.parse_args(argv)
    cfg = {
        "n_questions": args.questions,
        "strength_sd": args.strength_sd,
        "spacing": args.spacing,
        "judge_sd": args.judge_sd,
    }
    print("config:", {**asdict(SimConfig(n_systems=0)), **cfg, "n_systems": args.n})
    print(format_table(summarise(sweep(args.n, args.seeds, **cfg))))


if __name__ == "__main__":
    main()
