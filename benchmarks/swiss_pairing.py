"""Swiss pairing with look-ahead: rounds played and pairing time per N (spec §6).

For N systems and the default and the maximum number of rounds, runs ``swiss`` over 30 seeds
with random match scores and prints how many runs ended before the requested rounds, the
worst and mean wall time of one tournament (pairing plus trivial scoring).

    python -m benchmarks swiss_pairing [max_n]   # from the repo root
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence

from ragcourt.tournament.simulate import random_play
from ragcourt.tournament.swiss import max_rounds, swiss


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("top", type=int, nargs="?", default=17, help="largest N (from 2)")
    top = ap.parse_args(argv).top
    print(f"{'N':>3} {'rounds':>6} {'ended early':>11} {'worst s':>8} {'mean s':>7}")
    for n in range(2, top + 1):
        for rounds in sorted({None, max_rounds(n)}, key=lambda r: r or 0):
            times, early = [], 0
            for seed in range(30):
                t0 = time.perf_counter()
                res = swiss([f"s{i}" for i in range(n)], random_play(seed), rounds, seed=seed)
                times.append(time.perf_counter() - t0)
                early += res.stopped != "rounds"
            label = "default" if rounds is None else str(rounds)
            print(
                f"{n:>3} {label:>6} {early:>8}/30 {max(times):>8.3f} {sum(times) / 30:>7.3f}",
                flush=True,
            )
