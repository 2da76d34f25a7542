"""The measures: known-pair order and τ-b of the ladder, the Elo-gap curve with bootstrap
intervals, and the gold run's agreement of Elo with the true scores."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl
from scipy.stats import kendalltau

from benchmarks.meta_eval.results import ConfigResult, GapPoint, GoldAgreement
from benchmarks.meta_eval.systems import CURVE_PAIRS, GOLD_CONTROLS, KNOWN_PAIRS, LADDER
from ragcourt.calibration import gold_squad as gs
from ragcourt.core.intervals import percentile_interval
from ragcourt.judging.discrimination import SEPARATED, verdict
from ragcourt.orchestration.params import Params
from ragcourt.tournament import bootstrap
from ragcourt.tournament.builders import build_pairwise_judge
from ragcourt.tournament.pairwise import PairwiseContext
from ragcourt.tournament.runner import run_tournament
from ragcourt.tournament.score_matrix import ScoreMatrix
from ragcourt.tournament.swiss import Pair


def pair_key(pair: Pair) -> str:
    return f"{pair[0]}>{pair[1]}"


def order_measures(elo: dict[str, float]) -> tuple[dict[str, bool], float, float | None]:
    """Known pairs whose Elo order matches (ties miss), their share, and τ-b of the ladder."""
    hits = {pair_key(p): elo[p[0]] > elo[p[1]] for p in KNOWN_PAIRS if p[0] in elo and p[1] in elo}
    acc = sum(hits.values()) / len(hits) if hits else float("nan")
    ladder = [s for s in LADDER if s in elo]
    tau = kendalltau([-LADDER.index(s) for s in ladder], [elo[s] for s in ladder]).statistic
    return hits, acc, None if tau is None or np.isnan(tau) else float(tau)


def swiss_schedule(matches: pl.DataFrame) -> list[list[Pair]]:
    """The Swiss rounds as played (byes dropped), for the bootstrap replay."""
    sw = matches.filter((pl.col("tournament") == "swiss") & pl.col("system_b").is_not_null())
    return [
        list(zip(g["system_a"].to_list(), g["system_b"].to_list(), strict=True))
        for _, g in sw.group_by("round", maintain_order=True)
    ]


def gap_curve(
    params: Params,
    judge_ctx: PairwiseContext,
    kind: str,
    ns: Sequence[int],
    n_boot: int,
    seed: int,
    pairs: Sequence[Pair] = CURVE_PAIRS,
) -> tuple[list[GapPoint], dict[str, dict[str, float]]]:
    """Per n: a Swiss tournament on the first n of a seeded question permutation, the
    bootstrap interval of each of ``pairs``' Elo gap (better − worse), and its Elo."""
    assert judge_ctx.answers is not None and judge_ctx.qa is not None
    judge = build_pairwise_judge(kind, judge_ctx)
    systems = sorted(judge_ctx.answers["system"].unique().to_list())
    order = list(np.random.default_rng(seed).permutation(judge_ctx.qa["question_id"].to_list()))
    tp = params.tournament.model_copy(update={"bootstrap": n_boot, "seed": seed})
    points: list[GapPoint] = []
    elos: dict[str, dict[str, float]] = {}
    for n in ns:
        out = run_tournament(judge, systems, [str(q) for q in order[:n]], tp)
        elo = dict(zip(out.leaderboard["system"], out.leaderboard["elo"], strict=True))
        elos[str(n)] = {s: round(float(e), 1) for s, e in elo.items()}
        sm = ScoreMatrix.from_pairwise(out.pairwise, systems)
        reps = bootstrap.elo_replicates(
            sm, swiss_schedule(out.matches), n_boot, seed, tp.k_factor, tp.upset_weighting,
            tp.initial_elo,
        )  # fmt: skip
        idx = {s: i for i, s in enumerate(systems)}
        for good, bad in pairs:
            ci = percentile_interval(reps[:, idx[good]] - reps[:, idx[bad]]) if len(reps) else None
            lo, hi = ci if ci is not None else (None, None)
            v = verdict(lo, hi)
            points.append(
                GapPoint(
                    questions=n,
                    better=good,
                    worse=bad,
                    elo_gap=round(elo[good] - elo[bad], 2),
                    lo=None if lo is None else round(lo, 2),
                    hi=None if hi is None else round(hi, 2),
                    verdict=v,
                    separated=v == SEPARATED,
                )
            )
    return points, elos


def agreement(
    config: ConfigResult, scores: dict[str, gs.SystemScore], truth_pairs: Sequence[gs.TruthPair]
) -> list[GoldAgreement]:
    """Per question count of the configuration's curve (and its full run): τ-b and pairwise
    agreement of Elo with the true F1 and EM, with and without the known-quality controls;
    for F1 also over the significant truth pairs."""
    runs = {config.questions: config.elo, **{int(n): e for n, e in config.curve_elo.items()}}
    out = []
    for n, elo in sorted(runs.items()):
        for truth in ("f1", "em"):
            true = {s: float(getattr(v, truth)) for s, v in scores.items()}
            for with_controls in (True, False):
                names = [
                    s for s in scores if s in elo and (with_controls or s not in GOLD_CONTROLS)
                ]
                hits, pairs = gs.pairwise_agreement(true, elo, names)
                tau = gs.kendall_tau_b(true, elo, names)
                sig = (
                    [
                        (t.better, t.worse)
                        for t in truth_pairs
                        if t.significant and t.better in names and t.worse in names
                    ]
                    if truth == "f1"
                    else None
                )
                out.append(
                    GoldAgreement(
                        config=config.name, questions=n, truth=truth, controls=with_controls,
                        systems=len(names), kendall_tau_b=None if tau is None else round(tau, 3),
                        pairs_agree=hits, pairs=pairs,
                        pairwise_agreement=round(hits / pairs, 3) if pairs else None,
                        significant_pairs=None if sig is None else len(sig),
                        significant_agree=None if sig is None
                        else sum(elo[a] > elo[b] for a, b in sig),
                        significant_tau_b=None if sig is None or (t := gs.tau_b_over_pairs(
                            elo, sig)) is None else round(t, 3),
                    )
                )  # fmt: skip
    return out
