"""PPI on simulated systems with known accuracy and a biased, noisy judge.

Each repetition draws, per system with true accuracy p, N judged questions with human truth
Y ~ Bernoulli(p) and a binary judge that calls a wrong answer correct with probability
``--fpr`` and a right answer wrong with ``--fnr`` (a lenient judge: its mean is biased by
fpr·(1 − p) − fnr·p and it is noisy). n of the N questions get human labels, drawn as

* ``uniform``: a simple random sample;
* ``proportional``: stratified by the judge's verdict, 2 per stratum then D'Hondt
  (``ragcourt label``'s default allocation, ``sampling.allocate``);
* ``equal`` (``--designs ... equal``): stratified by the judge's verdict, equal allocation
  (``allocation: equal``): it under-samples the large stratum where a lenient judge makes its
  errors, and PPI then under-covers with few labels; shown to justify the default;

the stratified designs re-weighted by post-stratification (w = N_h / m_h). Four 95% intervals
come from ``ragcourt.calibration.ppi`` (``ppi_py`` underneath): **PPI** (λ = 1, the default:
judge on all N, rectified by the n labels), **PPI++** (power-tuned λ, ``--tuned``),
**human-only** (the n
labels alone) and **judge-only** (the judge's mean over N: the label-free number). Reported
per design and n: coverage of the true p over all repetitions and systems (target 0.93-0.97
for PPI), mean interval widths (PPI vs human-only) and the bias of PPI and of the judge-only
estimate; then, per system, the judge-only bias (theory and simulation) next to the PPI bias;
and the coverage of the paired PPI difference of the best and worst system
(``ppi_difference``, both systems labelled on the same questions, uniform design).

    python -m benchmarks ppi                      # 1000 repetitions, ~1 min on 2 cores
    python -m benchmarks ppi --reps 200 --n 20 100 --check
    python -m benchmarks ppi --validation         # then benchmarks/ppi_validation.py

``--tuned`` adds the PPI++ columns (power-tuned λ; twice the run time). ``--check`` exits 1
unless the PPI coverage of the uniform and proportional designs is within 0.93-0.975 for every
n >= 50 (the 0.93-0.97 target plus the Monte Carlo error, SE ~0.004 over 3000 intervals) and
at least 0.90 at n = 20 (a CLT interval on 20 binary labels), and, per system,
|PPI bias| < 0.005 and below a fifth of the judge's bias where that is at least 0.02.

The labelled questions are also among the N judged ones (as in the calibrate stage), so the
PPI interval is slightly conservative when n is a large share of N (coverage ~0.96-0.97 at
n = 200, N = 1000): the imputed and rectifier means are negatively correlated for a noisy
judge, which the CLT formula's independence assumption ignores.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from benchmarks._common import ROOT
from ragcourt.calibration.ppi import estimate, poststratified_weights, ppi_difference, ppi_mean
from ragcourt.calibration.sampling import allocate

SYSTEMS = {"A": 0.55, "B": 0.70, "C": 0.85}
DESIGNS = ("uniform", "proportional", "equal")  # --designs; the default run skips "equal"


@dataclass(frozen=True)
class Config:
    n_judged: int
    fpr: float
    fnr: float
    alpha: float
    designs: tuple[str, ...] = ("uniform", "proportional")
    tuned: bool = False  # also PPI++ (power-tuned λ); doubles the run time


def _labelled(rng: np.random.Generator, yh: np.ndarray, n: int, design: str) -> Any:
    """Indices of the n labelled questions and their weights (None: uniform)."""
    if design == "uniform":
        return rng.choice(yh.size, n, replace=False), None
    strata = np.where(yh >= 0.5, "judge_1", "judge_0")
    sizes = {s: int((strata == s).sum()) for s in ("judge_0", "judge_1")}
    scheme: Literal["proportional", "equal"] = "equal" if design == "equal" else "proportional"
    alloc = allocate(sizes, n, ("judge_0", "judge_1"), scheme)
    idx = np.concatenate(
        [rng.choice(np.flatnonzero(strata == s), k, replace=False) for s, k in alloc.items()]
    )
    return idx, poststratified_weights(strata[idx].tolist(), strata.tolist()).weights


def _simulate(args: tuple[int, int, int, Config]) -> dict[str, Any]:
    """All repetitions for one n: per design and system, the three intervals' records."""
    n, reps, seed, cfg = args
    rng = np.random.default_rng([seed, n])
    names = list(SYSTEMS)
    out: dict[str, Any] = {"n": n, "rows": [], "diff": []}
    best, worst = max(SYSTEMS, key=SYSTEMS.__getitem__), min(SYSTEMS, key=SYSTEMS.__getitem__)
    for _ in range(reps):
        ys, yhs = {}, {}
        for s in names:
            y = (rng.random(cfg.n_judged) < SYSTEMS[s]).astype(float)
            flip = rng.random(cfg.n_judged)
            yh = np.where(y == 1, flip >= cfg.fnr, flip < cfg.fpr).astype(float)
            ys[s], yhs[s] = y, yh
        for design in cfg.designs:
            for s in names:
                idx, w = _labelled(rng, yhs[s], n, design)
                est = estimate(ys[s][idx], yhs[s][idx], yhs[s], alpha=cfg.alpha, weights=w)
                assert est.ppi is not None and est.human is not None and est.judge is not None
                tuned = est.ppi  # placeholder when PPI++ is not asked for (reported as "-")
                if cfg.tuned:
                    tuned, _ = ppi_mean(ys[s][idx], yhs[s][idx], yhs[s], alpha=cfg.alpha, weights=w)
                out["rows"].append(
                    (
                        design,
                        s,
                        *(est.ppi.estimate, est.ppi.lo, est.ppi.hi),
                        *(tuned.estimate, tuned.lo, tuned.hi),
                        *(est.human.estimate, est.human.lo, est.human.hi),
                        *(est.judge.estimate, est.judge.lo, est.judge.hi),
                    )
                )
        # paired difference best - worst on the same labelled questions (uniform design)
        idx = rng.choice(cfg.n_judged, n, replace=False)
        d = ppi_difference(
            ys[best][idx],
            ys[worst][idx],
            yhs[best][idx],
            yhs[worst][idx],
            yhs[best],
            yhs[worst],
            alpha=cfg.alpha,
        )
        assert d.ppi is not None and d.human is not None and d.judge is not None
        out["diff"].append(
            (
                *(d.ppi.lo, d.ppi.hi, d.human.lo, d.human.hi, d.judge.lo, d.judge.hi),
                *(d.ppi.estimate, d.judge.estimate),
            )
        )
    return out


def _summary(results: list[dict[str, Any]], cfg: Config) -> tuple[list[str], bool]:
    """The report tables, and whether the targets (module doc) are met."""
    lines: list[str] = []
    ok = True
    truth = SYSTEMS
    judge_bias = {s: cfg.fpr * (1 - p) - cfg.fnr * p for s, p in truth.items()}
    head = (
        f"{'design':<13}{'n':>4}  {'cov PPI':>7}{'PPI++':>7}{'human':>7}{'judge':>7}"
        f"  {'width PPI':>9}{'PPI++':>7}{'human':>7}{'PPI/hum':>8}"
        f"  {'bias PPI':>9}{'bias judge':>11}"
    )
    lines += [
        "coverage of the true accuracy (pooled over systems), mean 95% interval width, bias",
        head,
        "-" * len(head),
    ]
    per_system: dict[tuple[str, int, str], list[float]] = {}
    for res in sorted(results, key=lambda r: r["n"]):
        n = res["n"]
        rows = np.array([r[2:] for r in res["rows"]], dtype=float)
        design = np.array([r[0] for r in res["rows"]])
        system = np.array([r[1] for r in res["rows"]])
        p = np.array([truth[s] for s in system])
        for d in cfg.designs:
            m = design == d
            r, t = rows[m], p[m]
            # column blocks: PPI 0-2, PPI++ 3-5, human 6-8, judge 9-11 (estimate, lo, hi)
            cov = [float(np.mean((r[:, k + 1] <= t) & (t <= r[:, k + 2]))) for k in (0, 3, 6, 9)]
            wid = [float(np.mean(r[:, k + 2] - r[:, k + 1])) for k in (0, 3, 6)]
            bias_ppi = float(np.mean(r[:, 0] - t))
            bias_judge = float(np.mean(r[:, 9] - t))
            pp_cov, pp_wid = (
                (f"{cov[1]:>7.3f}", f"{wid[1]:>7.3f}") if cfg.tuned else ("-".rjust(7),) * 2
            )
            lines.append(
                f"{d:<13}{n:>4}  {cov[0]:>7.3f}{pp_cov}{cov[2]:>7.3f}{cov[3]:>7.3f}"
                f"  {wid[0]:>9.3f}{pp_wid}{wid[2]:>7.3f}{wid[0] / wid[2]:>8.2f}"
                f"  {bias_ppi:>+9.4f}{bias_judge:>+11.4f}"
            )
            if d != "equal":
                ok &= (0.93 <= cov[0] <= 0.975) if n >= 50 else cov[0] >= 0.90
            for s in truth:
                ms = system[m] == s
                per_system[(s, n, d)] = [
                    float(np.mean(r[ms, 0] - truth[s])),
                    float(np.mean(r[ms, 9] - truth[s])),
                    float(np.mean(r[ms, 6] - truth[s])),
                ]
    lines.append("")
    lines.append(
        "bias per system (all n and designs pooled): judge-only in theory, fpr(1-p) - fnr*p, "
        "and simulated; PPI; human-only"
    )
    sh = f"{'system':<7}{'p':>6}{'judge (theory)':>16}{'judge (sim)':>13}{'PPI':>10}{'human':>10}"
    lines += [sh, "-" * len(sh)]
    for s, p_s in truth.items():
        vals = np.array([v for k, v in per_system.items() if k[0] == s])
        ppi_b, judge_b = float(vals[:, 0].mean()), float(vals[:, 1].mean())
        lines.append(
            f"{s:<7}{p_s:>6.2f}{judge_bias[s]:>+16.4f}{judge_b:>+13.4f}"
            f"{ppi_b:>+10.4f}{vals[:, 2].mean():>+10.4f}"
        )
        ok &= abs(ppi_b) < 0.005
        if abs(judge_bias[s]) >= 0.02:
            ok &= abs(ppi_b) < abs(judge_b) / 5
    best, worst = max(truth, key=truth.__getitem__), min(truth, key=truth.__getitem__)
    true_diff = truth[best] - truth[worst]
    lines.append("")
    lines.append(
        f"paired difference {best} - {worst} (true {true_diff:+.2f}), uniform design, PPI λ = 1"
    )
    dh = (
        f"{'n':>4}{'cov PPI':>9}{'cov human':>11}{'cov judge':>11}"
        f"{'width PPI':>11}{'width human':>13}{'bias PPI':>10}{'bias judge':>12}"
    )
    lines += [dh, "-" * len(dh)]
    for res in sorted(results, key=lambda r: r["n"]):
        diff = np.array(res["diff"], dtype=float)
        cov = [
            float(np.mean((diff[:, k] <= true_diff) & (true_diff <= diff[:, k + 1])))
            for k in (0, 2, 4)
        ]
        lines.append(
            f"{res['n']:>4}{cov[0]:>9.3f}{cov[1]:>11.3f}{cov[2]:>11.3f}"
            f"{np.mean(diff[:, 1] - diff[:, 0]):>11.3f}{np.mean(diff[:, 3] - diff[:, 2]):>13.3f}"
            f"{np.mean(diff[:, 6]) - true_diff:>+10.4f}{np.mean(diff[:, 7]) - true_diff:>+12.4f}"
        )
    return lines, ok


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=1000, help="repetitions per n")
    ap.add_argument("--n", type=int, nargs="+", default=[20, 50, 100, 200], help="human labels")
    ap.add_argument("--n-judged", type=int, default=1000, help="judged questions per system")
    ap.add_argument("--fpr", type=float, default=0.30, help="judge: P(correct | wrong answer)")
    ap.add_argument("--fnr", type=float, default=0.05, help="judge: P(wrong | right answer)")
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--designs", nargs="+", choices=DESIGNS, default=["uniform", "proportional"])
    ap.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    ap.add_argument("--check", action="store_true", help="exit 1 if a target is missed")
    ap.add_argument("--tuned", action="store_true", help="also PPI++ (power-tuned λ)")
    ap.add_argument("--validation", action="store_true", help="also run ppi_validation.py")
    args = ap.parse_args(argv)
    cfg = Config(args.n_judged, args.fpr, args.fnr, args.alpha, tuple(args.designs), args.tuned)
    print(
        f"systems (true accuracy): {SYSTEMS}; judge fpr={cfg.fpr} fnr={cfg.fnr}; "
        f"N={cfg.n_judged} judged questions per system; {args.reps} repetitions per n; "
        f"{1 - cfg.alpha:.0%} intervals"
    )
    t0 = time.perf_counter()
    jobs = [(n, args.reps, args.seed, cfg) for n in args.n]
    if args.workers > 1:
        with ProcessPoolExecutor(args.workers) as ex:
            results = list(ex.map(_simulate, jobs))
    else:
        results = [_simulate(j) for j in jobs]
    lines, ok = _summary(results, cfg)
    print(f"({time.perf_counter() - t0:.1f} s)\n")
    print("\n".join(lines))
    print(
        "\ntargets (uniform and proportional designs): PPI coverage in [0.93, 0.975] for n >= 50"
        " and >= 0.90 at n = 20; per system |PPI bias| < 0.005 and < |judge bias| / 5 where "
        f"the judge's |bias| >= 0.02: {'met' if ok else 'NOT met'}"
    )
    if args.validation:
        argv = [f"--reps={args.reps}", "--n", *map(str, args.n)]
        cmd = [sys.executable, "-m", "benchmarks", "ppi_validation", *argv]
        done = subprocess.run(cmd, cwd=ROOT, check=False)
        if done.returncode:
            sys.exit(done.returncode)
    if args.check and not ok:
        sys.exit(1)
