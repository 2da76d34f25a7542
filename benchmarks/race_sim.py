"""The race's stopping rule on simulated systems with known strengths (spec §6, "Race").

Three fields: every system equal (each one is a best, the hardest case for the error bound),
the top three tied 100 Elo above a spaced tail, and 24 systems of N(0, 200) Elo strengths.
Per field, over many seeded races: how often the true best is dropped (the rule's error,
bounded by alpha; exact 95% Clopper-Pearson interval), how often one configuration is
separated, whether the leader is the true best, and the answer + judge calls against a
round-robin of the same questions. ``--figure PATH`` draws the drop rates against alpha.

    python -m benchmarks race_sim [--seeds 200] [--alpha 0.05] [--figure docs/assets/race_sim.png]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragcourt.tournament.race import RaceSettings
from ragcourt.tournament.race_sim import Scenario, summarise, sweep, tied_top


def scenarios() -> list[Scenario]:
    return [
        Scenario("8 equal systems", 8, tuple([0.0] * 8)),
        Scenario("8 systems, top 3 tied, tail 100 Elo apart", 8, tied_top(8, 3, 100.0)),
        Scenario("24 systems, N(0, 200) Elo", 24, None, 200.0),
    ]


def plot(summaries: list[tuple[str, dict[str, Any]]], alpha: float, path: Path) -> None:
    """Drop rate of the true best per field with its exact 95% interval, and alpha."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 0.9 + 0.7 * len(summaries)))
    for y, (_name, s) in enumerate(summaries):
        err = [[s["drop_rate"] - s["drop_rate_lo"]], [s["drop_rate_hi"] - s["drop_rate"]]]
        ax.errorbar([s["drop_rate"]], [y], xerr=err, fmt="o", capsize=4, color="C0")
    ax.axvline(alpha, color="C3", ls="--", label=f"alpha = {alpha:g}")
    ax.set_yticks(range(len(summaries)), [n for n, _ in summaries])
    ax.set_xlabel("rate of dropping the true best (exact 95% interval)")
    ax.set_xlim(left=0)
    ax.legend(loc="lower right")
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=200)
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--round-questions", type=int, default=40)
    ap.add_argument("--opponents", type=int, default=2)
    ap.add_argument("--figure", type=Path, default=None)
    args = ap.parse_args(argv)
    cfg = RaceSettings(
        alpha=args.alpha,
        rounds=args.rounds,
        round_questions=args.round_questions,
        opponents=args.opponents,
    )
    print(f"race: {cfg}; oracle defaults of ragcourt.tournament.simulate.SimConfig")
    head = (
        f"{'field':<44} {'races':>5} {'dropped best':>12} {'rate [95% CI]':>20} "
        f"{'separated':>9} {'leader=best':>11} {'rounds':>6} {'calls/RR':>8} {'judge/RR':>8}"
    )
    print(head)
    out = []
    for sc in scenarios():
        t0 = time.perf_counter()
        s = summarise(sweep(sc, cfg, range(args.seeds)))
        out.append((sc.name, s))
        ci = f"{s['drop_rate']:.3f} [{s['drop_rate_lo']:.3f}, {s['drop_rate_hi']:.3f}]"
        print(
            f"{sc.name:<44} {s['races']:>5} {s['dropped_best']:>12} {ci:>20} "
            f"{s['separated']:>9.0%} {s['leader_is_best']:>11.0%} {s['rounds']:>6.2f} "
            f"{s['calls_fraction']:>8.1%} {s['judge_fraction']:>8.1%}"
            f"   ({time.perf_counter() - t0:.1f} s)"
        )
    if args.figure is not None:
        plot(out, args.alpha, args.figure)
        print(f"wrote {args.figure}")
