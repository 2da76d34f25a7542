"""PPI on real human labels with cheap real judges: do the intervals cover?

Two validation sets, each with a human label on every item and a judge that needs no LLM:

* **SQuAD 2.0** (``../shared/validation/squadv2_train.json``: question, context,
  answerability 0/1). Judge: a **token-overlap answerability heuristic**: the share of the
  question's content words (lower-cased, 3+ characters, not a stop word) that occur in the
  context; "answerable" when >= 0.5 (fixed beforehand, not tuned). A weak judge: SQuAD 2.0's
  unanswerable questions were written to overlap their context.
* **STS-B** (``../shared/validation/sts_train.json``: sentence1, sentence2, similarity 0-1).
  Human label: "equivalent" = similarity >= 0.7 (as ``calibrate_correctness.py``). Judge:
  **MiniLM cosine** (``ragcourt.retrieval.embedders``, all-minilm-l6-v2) of the two sentences,
  "equivalent" when >= 0.7 (``judge.judges.ref_similarity``'s threshold in params.yaml).

For each judge both its binary verdict and its raw score (overlap share, cosine) are used as
the PPI predictor f. Per set: agreement with the human labels on all items (accuracy, Cohen's
kappa, Spearman of the score; ``ragcourt.calibration.agreement``) and the judge's bias (mean
judge value minus the human rate). Then, for n = 20 ... 200 "user labels", repeated
``--reps`` times:

* ``split``: n random items are the user's labels, the rest are hidden; the judge scores all
  items; the truth is the human rate over all items (the user's labels and the hidden rest).
  This is a finite population, so a valid interval covers at least 95%.
* ``resample``: the items are the population; each repetition draws a data set of the same
  size with replacement and labels n of it; the truth is the population rate, exactly the
  estimand of the PPI interval (coverage near 95%).

Coverage of the 95% PPI (λ = 1), human-only and judge-only intervals, their mean widths, and
the PPI bias are printed per set, predictor, protocol and n.

    python -m benchmarks ppi_validation                 # 1000 repetitions, ~1-2 min on 2 cores
    python -m benchmarks ppi_validation --reps 200 --n 50 200
"""

from __future__ import annotations

import argparse
import json
import os
import re
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks._common import VALIDATION
from ragcourt.calibration.agreement import binary_judge_agreement
from ragcourt.calibration.ppi import estimate

SQUAD = VALIDATION / "squadv2_train.json"
STS = VALIDATION / "sts_train.json"
OVERLAP_THRESHOLD = 0.5
COSINE_THRESHOLD = 0.7  # judge.judges.ref_similarity.threshold
EQUIVALENT = 0.7  # STS-B similarity at or above which a pair is "equivalent"
STOP = frozenset(
    """the and for are was were with that this from which what who whom whose when where why
    how did does doing done has have had not but its it's into onto than then them they their
    there these those been being can could would should will shall may might must about after
    before over under also such only other some any each many much more most you your our his
    her him she he we us""".split()  # noqa: SIM905
)
_WORD = re.compile(r"[a-z0-9]+")


def content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) >= 3 and w not in STOP}


def overlap_share(question: str, context: str) -> float:
    """Share of the question's content words found in the context (0 if it has none)."""
    q = content_words(question)
    return len(q & content_words(context)) / len(q) if q else 0.0


def load_squad(path: Path) -> dict[str, Any]:
    items = json.loads(path.read_text())
    human = np.array([float(it["answerability"]) for it in items])
    score = np.array([overlap_share(it["question"], it["context"]) for it in items])
    return {
        "set": "SQuAD2",
        "judge": f"token-overlap answerability heuristic (>= {OVERLAP_THRESHOLD})",
        "human": human,
        "score": score,
        "verdict": (score >= OVERLAP_THRESHOLD).astype(float),
    }


def load_sts(path: Path) -> dict[str, Any]:
    from ragcourt.retrieval.embedders import encode

    items = json.loads(path.read_text())
    a = encode("all-minilm-l6-v2", [it["sentence1"] for it in items])
    b = encode("all-minilm-l6-v2", [it["sentence2"] for it in items])
    cos = np.clip(np.sum(a * b, axis=1).astype(float), 0.0, 1.0)
    human = np.array([float(it["similarity"] >= EQUIVALENT) for it in items])
    return {
        "set": "STS-B",
        "judge": f"MiniLM cosine (>= {COSINE_THRESHOLD})",
        "human": human,
        "score": cos,
        "verdict": (cos >= COSINE_THRESHOLD).astype(float),
    }


def _coverage(args: tuple[str, str, np.ndarray, np.ndarray, list[int], int, int]) -> list[str]:
    name, predictor, y, f, ns, reps, seed = args
    rng = np.random.default_rng([seed, len(name), len(predictor)])
    big_n = y.size
    truth = float(y.mean())
    lines = []
    for protocol in ("split", "resample"):
        for n in ns:
            cov = np.zeros(3)
            width = np.zeros(2)
            bias = np.zeros(2)
            for _ in range(reps):
                if protocol == "split":
                    yy, ff = y, f
                else:
                    draw = rng.integers(0, big_n, big_n)
                    yy, ff = y[draw], f[draw]
                idx = rng.choice(big_n, n, replace=False)
                est = estimate(yy[idx], ff[idx], ff)
                assert est.ppi is not None and est.human is not None and est.judge is not None
                cov += [est.ppi.covers(truth), est.human.covers(truth), est.judge.covers(truth)]
                width += [est.ppi.width, est.human.width]
                bias += [est.ppi.estimate - truth, est.judge.estimate - truth]
            c, w, b = cov / reps, width / reps, bias / reps
            lines.append(
                f"{name:<8}{predictor:<9}{protocol:<10}{n:>5}  {c[0]:>8.3f}{c[1]:>10.3f}"
                f"{c[2]:>10.3f}  {w[0]:>10.3f}{w[1]:>12.3f}{w[0] / w[1]:>7.2f}"
                f"  {b[0]:>+9.4f}{b[1]:>+11.4f}"
            )
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--n", type=int, nargs="+", default=[20, 50, 100, 200])
    ap.add_argument("--squad", type=Path, default=SQUAD)
    ap.add_argument("--sts", type=Path, default=STS)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    sets = [load_squad(args.squad), load_sts(args.sts)]
    print(f"\n== PPI on real labels ({time.perf_counter() - t0:.1f} s to load and judge)")
    for d in sets:
        agree = binary_judge_agreement(
            d["set"], "judge", d["human"] == 1, d["verdict"] == 1, d["score"].tolist()
        )
        print(
            f"{d['set']}: {d['human'].size} items, human rate {d['human'].mean():.3f}; judge "
            f"{d['judge']}: verdict rate {d['verdict'].mean():.3f} (bias "
            f"{d['verdict'].mean() - d['human'].mean():+.3f}), mean score {d['score'].mean():.3f}"
            f"; accuracy {agree['accuracy']:.3f} [{agree['accuracy_lo']:.3f}, "
            f"{agree['accuracy_hi']:.3f}], kappa {agree['kappa']:.3f} [{agree['kappa_lo']:.3f},"
            f" {agree['kappa_hi']:.3f}], Spearman(score) {agree['spearman']:.3f}"
        )
    jobs = [
        (d["set"], predictor, d["human"], d[predictor], args.n, args.reps, args.seed)
        for d in sets
        for predictor in ("verdict", "score")
    ]
    t1 = time.perf_counter()
    if args.workers > 1:
        with ProcessPoolExecutor(args.workers) as ex:
            blocks = list(ex.map(_coverage, jobs))
    else:
        blocks = [_coverage(j) for j in jobs]
    head = (
        f"{'set':<8}{'f':<9}{'protocol':<10}{'n':>5}  {'cov PPI':>8}{'cov human':>10}"
        f"{'cov judge':>10}  {'width PPI':>10}{'width human':>12}{'ratio':>7}"
        f"  {'bias PPI':>9}{'bias judge':>11}"
    )
    print(
        f"\ncoverage of the human rate by 95% intervals, {args.reps} repetitions "
        f"({time.perf_counter() - t1:.1f} s); f = the judge's verdict or its raw score"
    )
    print(head)
    print("-" * len(head))
    for block in blocks:
        print("\n".join(block))
