"""The race's stopping rule on simulated systems with known strengths (spec §6, "Race").

Three fields: every system equal (each one is a best, the hardest case for the error bound),
the top three tied 100 Elo above a spaced tail, and 24 systems of N(0, 200) Elo strengths.
Per field and level alpha, over many seeded races: how often the true best is dropped (the
rule's error, bounded by alpha; exact 95% Clopper-Pearson interval), how often one
configuration is separated, whether the leader is the true best, and the answer + judge calls
against a round-robin of the same questions. A contrast row runs the same test at level alpha
on every look and opponent (no Bonferroni correction) on the equal field. ``--figure PATH``
draws the drop rates against alpha.

    python -m benchmarks race_sim [--seeds 200] [--alphas 0.05 0.3] [--figure PATH.png]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragcourt.tournament.params import RaceParams
from ragcourt.tournament.race_sim import Scenario, summarise, sweep, tied_top


def scenarios() -> list[Scenario]:
    return [
        Scenario("8 equal systems", 8, tuple([0.0] * 8)),
        Scenario("8 systems, top 3 tied, tail 100 Elo apart", 8, tied_top(8, 3, 100.0)),
        Scenario("24 systems, N(0, 200) Elo", 24, None, 200.0),
    ]


def plot(rows: list[tuple[str, float, dict[str, Any]]], alphas: list[float], path: Path) -> None:
    """Drop rate of the true best per (field, alpha) with its exact 95% interval; a dashed
    line at each alpha."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8.5, 1.0 + 0.45 * len(rows)))
    colour = {a: f"C{k}" for k, a in enumerate(alphas)}
    for y, (_name, alpha, s) in enumerate(rows):
        err = [[s["drop_rate"] - s["drop_rate_lo"]], [s["drop_rate_hi"] - s["drop_rate"]]]
        ax.errorbar([s["drop_rate"]], [y], xerr=err, fmt="o", capsize=4, color=colour[alpha])
    for a in alphas:
        ax.axvline(a, color=colour[a], ls="--", label=f"alpha = {a:g}")
    ax.set_yticks(range(len(rows)), [f"{n} (alpha {a:g})" for n, a, _ in rows])
    ax.set_xlabel("rate of dropping the true best (exact 95% interval)")
    ax.set_xlim(left=0)
    ax.legend(loc="lower right")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def row(name: str, sc: Scenario, cfg: RaceParams, seeds: int) -> dict[str, Any]:
    """Run and print one line."""
    t0 = time.perf_counter()
    s = summarise(sweep(sc, cfg, range(seeds)))
    ci = f"{s['drop_rate']:.3f} [{s['drop_rate_lo']:.3f}, {s['drop_rate_hi']:.3f}]"
    print(
        f"{name:<58} {s['races']:>5} {s['dropped_best']:>7} {ci:>20} "
        f"{s['separated']:>9.0%} {s['leader_is_best']:>11.0%} {s['rounds']:>6.2f} "
        f"{s['calls_fraction']:>8.1%} {s['judge_fraction']:>8.1%}"
        f"   ({time.perf_counter() - t0:.1f} s)",
        flush=True,
    )
    return s


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=200)
    ap.add_argument("--alphas", type=float, nargs="+", default=[0.05, 0.3])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--round-questions", type=int, default=40)
    ap.add_argument("--opponents", type=int, default=2)
    ap.add_argument("--figure", type=Path, default=None)
    args = ap.parse_args(argv)
    print(
        f"race: rounds={args.rounds} round_questions={args.round_questions} "
        f"opponents={args.opponents}; oracle defaults of ragcourt.tournament.simulate.SimConfig"
    )
    print(
        f"{'field':<58} {'races':>5} {'dropped':>7} {'rate [95% CI]':>20} {'separated':>9} "
        f"{'leader=best':>11} {'rounds':>6} {'calls/RR':>8} {'judge/RR':>8}"
    )
    out = []
    for alpha in args.alphas:
        cfg = RaceParams(
            alpha=alpha,
            rounds=args.rounds,
            round_questions=args.round_questions,
            opponents=args.opponents,
        )
        for sc in scenarios():
            out.append((sc.name, alpha, row(f"{sc.name}, alpha {alpha:g}", sc, cfg, args.seeds)))
        # contrast: the same test at level alpha on every look and opponent (no Bonferroni):
        # the race's alpha is divided by rounds x (N - 1), so pass alpha times that
        eq = scenarios()[0]
        naive = cfg.model_copy(update={"alpha": alpha * args.rounds * (eq.n_systems - 1)})
        s = row(f"{eq.name}, alpha {alpha:g} per test (uncorrected)", eq, naive, args.seeds)
        out.append((f"{eq.name}, uncorrected", alpha, s))
    if args.figure is not None:
        plot(out, args.alphas, args.figure)
        print(f"wrote {args.figure}")
