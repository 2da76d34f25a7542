"""One tournament on one pairwise judge, apart from I/O (spec §6): Swiss with Elo, round-robin,
Bradley-Terry and bootstrap CIs, the leaderboard and the
:class:`~ragcourt.tournament.summaries.TournamentSummary`.

Both schedules share one judgement memo, so a pair is judged once whichever needs it first;
the round-robin ranking is its Bradley-Terry fit. With round-robin on, every pair is judged
up front in one batch (an LLM judge's calls then run concurrently, not a batch per round;
the same judgements, counted for the schedule that first uses them). Judge-call counts are
measured (match records, memo); figures from a formula end in ``_computed``. The
leaderboard's ``matches`` = wins + ties + losses (matches with a valid judgement);
``failed_matches`` counts Swiss matches where every judgement failed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Literal, cast

import numpy as np
import polars as pl
from scipy.stats import kendalltau

from ragcourt.core.schemas import TABLES
from ragcourt.tournament import bootstrap
from ragcourt.tournament.discrimination import tournament_check
from ragcourt.tournament.gaps import elo_gaps
from ragcourt.tournament.memo import JudgementMemo
from ragcourt.tournament.pairwise import PairwiseJudge
from ragcourt.tournament.params import TournamentParams
from ragcourt.tournament.score_matrix import ScoreMatrix
from ragcourt.tournament.summaries import (
    BootstrapSettings,
    KendallTau,
    RoundRobinSection,
    SwissSection,
    TournamentSummary,
)
from ragcourt.tournament.swiss import (
    MatchRecord,
    TournamentResult,
    max_rounds,
    round_robin,
    round_robin_schedule,
    swiss,
)

if TYPE_CHECKING:
    from polars._typing import SchemaDict


@dataclass
class TournamentOutputs:
    pairwise: pl.DataFrame
    matches: pl.DataFrame
    leaderboard: pl.DataFrame
    summary: TournamentSummary


def _matches_frame(result: TournamentResult, name: str) -> pl.DataFrame:
    records = [{"tournament": name, **asdict(m)} for m in result.matches]
    return pl.DataFrame(records, schema=cast("SchemaDict", TABLES["matches"]))


def _records(matches: list[MatchRecord], systems: list[str]) -> dict[str, Counter[str]]:
    """Match-level wins / ties / losses per system over matches with at least one valid
    question; ``failed`` counts the matches (byes excluded) where every judgement failed."""
    rec = {s: Counter[str]() for s in systems}
    for m in matches:
        if m.system_b is None:
            continue
        if m.n_questions == 0:
            rec[m.system_a]["failed"] += 1
            rec[m.system_b]["failed"] += 1
            continue
        outcome = int(np.sign(round(m.score_a - m.score_b, 9)))
        rec[m.system_a][("losses", "ties", "wins")[outcome + 1]] += 1
        rec[m.system_b][("wins", "ties", "losses")[outcome + 1]] += 1
    return rec


def order_agreement(pairwise: pl.DataFrame) -> float | None:
    """Share of valid judgements whose two presentation orders pick the same winner (or tie):
    argmax(p_ab_a, p_ab_b, p_ab_tie) vs argmax(p_ba_b, p_ba_a, p_ba_tie) (order BA mapped back).
    A position-biased judge scores low; None when nothing was judged."""
    ok = pairwise.filter(pl.col("error").is_null())
    if ok.is_empty():
        return None
    ab = ok.select("p_ab_a", "p_ab_b", "p_ab_tie").to_numpy().argmax(axis=1)
    ba = ok.select("p_ba_b", "p_ba_a", "p_ba_tie").to_numpy().argmax(axis=1)
    return float((ab == ba).mean())


NO_VALID_JUDGEMENTS: Literal["no valid judgements"] = "no valid judgements"


def rank_labels(board: pl.DataFrame) -> list[str]:
    """ "<rank>. <system>" per leaderboard row ("–" for a missing rank)."""
    return [
        f"{r if r is not None else '–'}. {s}" for r, s in board.select("rank", "system").iter_rows()
    ]


def judged_anything(pairwise: pl.DataFrame) -> bool:
    """Whether at least one (pair, question) judgement succeeded; without one the tournament
    names no best system and its leaderboard has no ranks."""
    return pairwise.height > 0 and bool(pairwise["error"].is_null().any())


def _tau(x: list[float | None], y: list[float | None]) -> KendallTau:
    """Kendall τ-b over the systems rated in both lists (a system without a rating, e.g. a
    Bradley-Terry fit with no valid judgement, is left out); None below 2 systems."""
    both = [
        (a, b)
        for a, b in zip(x, y, strict=True)
        if a is not None and b is not None and np.isfinite(a) and np.isfinite(b)
    ]
    if len(both) < 2:
        return KendallTau(tau_b=None, p_value=None)
    res = kendalltau([a for a, _ in both], [b for _, b in both])
    tau, p = float(res.statistic), float(res.pvalue)
    return KendallTau(tau_b=None if np.isnan(tau) else tau, p_value=None if np.isnan(p) else p)


def swiss_rounds(tp: TournamentParams, n_systems: int) -> int | None:
    """``tournament.rounds``; when null: every repeat-free round (``max_rounds``) if the
    round-robin judges every pair anyway (more games per system, no extra judge call), else
    None (the Swiss default, ``ceil(log2 N) + 1``)."""
    if tp.rounds is not None:
        return tp.rounds
    return max_rounds(n_systems) if tp.round_robin else None


def _schedules(
    memo: JudgementMemo, systems: list[str], tp: TournamentParams
) -> tuple[TournamentResult, TournamentResult | None]:
    """The Swiss tournament and, when ``tp.round_robin``, the round-robin one, on one memo."""
    if tp.round_robin:  # every pair is judged anyway: all of them in one concurrent batch
        memo.prefetch([p for rnd in round_robin_schedule(systems) for p in rnd])
    k, upset, initial = tp.k_factor, tp.upset_weighting, tp.initial_elo
    sw = swiss(
        systems,
        memo.play_as("swiss"),
        swiss_rounds(tp, len(systems)),
        k=k,
        upset_weighting=upset,
        initial=initial,
        until_stable=tp.until_stable,
        seed=tp.seed,
    )
    rr = (
        round_robin(
            systems, memo.play_as("round_robin"), k=k, upset_weighting=upset, initial=initial
        )
        if tp.round_robin
        else None
    )
    return sw, rr


def _leaderboard(
    systems: list[str],
    controls: Mapping[str, str],
    sw: TournamentResult,
    rr: TournamentResult | None,
    bt: bootstrap.FloatArray,
    ci: bootstrap.Intervals,
    judged: bool,
) -> pl.DataFrame:
    """One row per system, ranked by Swiss Elo (ties by name); no ranks when nothing was
    judged (every Elo is still the initial rating: no order)."""
    rec = _records(sw.matches, systems)
    board = pl.DataFrame(
        {
            "system": systems,
            "control": [controls.get(s) for s in systems],
            "elo": [sw.ratings[s] for s in systems],
            "elo_lo": ci.elo_lo,
            "elo_hi": ci.elo_hi,
            "bt": bt,
            "bt_lo": ci.bt_lo,
            "bt_hi": ci.bt_hi,
            "wins": [rec[s]["wins"] for s in systems],
            "ties": [rec[s]["ties"] for s in systems],
            "losses": [rec[s]["losses"] for s in systems],
            "failed_matches": [rec[s]["failed"] for s in systems],
            "elo_rr": [rr.ratings[s] if rr else None for s in systems],
        },
        schema_overrides={
            "control": pl.String,
            "elo_rr": pl.Float64,
            "wins": pl.Int64,
            "ties": pl.Int64,
            "losses": pl.Int64,
            "failed_matches": pl.Int64,
        },
    ).with_columns(pl.col(c).fill_nan(None) for c in ("elo_lo", "elo_hi", "bt", "bt_lo", "bt_hi"))
    board = (
        board.with_columns(matches=pl.col("wins") + pl.col("ties") + pl.col("losses"))
        .sort(["elo", "system"], descending=[True, False])
        .with_row_index("rank", offset=1)
        .with_columns(pl.col("rank").cast(pl.Int64))
    )
    if not judged:
        board = board.with_columns(pl.lit(None, dtype=pl.Int64).alias("rank"))
    return board


def run_tournament(
    judge: PairwiseJudge,
    systems: list[str],
    questions: list[str],
    tp: TournamentParams,
    controls: Mapping[str, str] | None = None,
) -> TournamentOutputs:
    """Swiss (+ round-robin), BT and bootstrap CIs on one judge; pure apart from judge calls.
    ``controls`` ({system: control kind}) marks the leaderboard's ``control`` column and
    feeds the discrimination check (:mod:`ragcourt.tournament.discrimination`)."""
    controls = dict(controls or {})
    memo = JudgementMemo(judge, questions, tp.margin)
    sw, rr = _schedules(memo, systems, tp)
    pairwise = memo.pairwise_frame(judge.name)
    sm = ScoreMatrix.from_pairwise(pairwise, systems)
    bt = sm.fit_bt(anchor=tp.initial_elo)
    replicates = bootstrap.elo_replicates(
        sm, sw.schedule, tp.bootstrap, tp.seed, tp.k_factor, tp.upset_weighting, tp.initial_elo
    )
    ci = bootstrap.intervals(sm, replicates, tp.seed, tp.initial_elo)
    check = tournament_check(memo, systems, sw.ratings, replicates, controls)
    judged = judged_anything(pairwise)
    board = _leaderboard(systems, controls, sw, rr, bt, ci, judged)
    matches = pl.concat(
        [_matches_frame(sw, "swiss"), *([_matches_frame(rr, "round_robin")] if rr else [])]
    )
    summary = _summary(judge.name, systems, questions, sw, rr, memo, pairwise, board, tp)
    ranked_real = [s for s in board["system"].to_list() if s not in controls]
    gaps = (
        elo_gaps(ranked_real, systems, sw.ratings, replicates, len(questions)) if judged else None
    )
    summary = summary.model_copy(update={"discrimination": check, "elo_gaps": gaps})
    return TournamentOutputs(pairwise, matches, board, summary)


MARGIN_NOTE = (
    "pairwise.margin is ΔP = P_max − P_second of the combined "
    "probabilities; ΔP >= margin_threshold scores hard, below it soft"
)
JUDGE_CALL_UNIT = (
    "one presentation order of one question of one pair "
    "(llm judge: one analysis call + one verdict call)"
)
JUDGE_CALLS_NOTE = (
    "judge_calls: order-judgements the schedule's matches used, "
    "counted from its match records; judge_calls_executed: those first run for it (the "
    "rest were served from the shared memo); *_computed: formula, not measured"
)


def _summary(
    judge: str,
    systems: list[str],
    questions: list[str],
    sw: TournamentResult,
    rr: TournamentResult | None,
    memo: JudgementMemo,
    pairwise: pl.DataFrame,
    board: pl.DataFrame,
    tp: TournamentParams,
) -> TournamentSummary:
    n, q = len(systems), len(questions)
    played = [m for m in sw.matches if m.system_b is not None]
    rr_played = [m for m in rr.matches if m.system_b is not None] if rr else []
    errors = pairwise.filter(pl.col("error").is_not_null())
    reasons = Counter(e[:200] for e in errors["error"].to_list())
    by_system = board.sort("system")
    all_pairs = n * (n - 1) // 2

    def used_calls(ms: list[MatchRecord]) -> int:
        # both presentation orders of every question of every match (valid + failed)
        return 2 * sum(m.n_questions + m.n_errors for m in ms)

    ranked = judged_anything(pairwise)
    return TournamentSummary(
        judge=judge,
        outcome="ranked" if ranked else NO_VALID_JUDGEMENTS,
        best_system=board.sort("rank")["system"][0] if ranked else None,
        n_systems=n,
        n_questions=q,
        margin_threshold=tp.margin,
        margin_note=MARGIN_NOTE,
        judge_call_unit=JUDGE_CALL_UNIT,
        judge_calls_note=JUDGE_CALLS_NOTE,
        swiss=SwissSection(
            rounds=sw.rounds_played,
            stopped=sw.stopped,
            matches=len(played),
            failed_matches=sum(1 for m in played if m.n_questions == 0),
            byes=len(sw.matches) - len(played),
            judge_calls=used_calls(played),
            judge_calls_executed=memo.executed_by.get("swiss", 0),
            error_judgements=sum(m.n_errors for m in played),
            ranking=sw.ranking(),
        ),
        round_robin=RoundRobinSection(
            enabled=rr is not None,
            matches=len(rr_played) if rr else None,
            failed_matches=sum(1 for m in rr_played if m.n_questions == 0) if rr else None,
            judge_calls=used_calls(rr_played) if rr else None,
            judge_calls_executed=memo.executed_by.get("round_robin", 0) if rr else None,
            error_judgements=sum(m.n_errors for m in rr_played) if rr else None,
            matches_computed=all_pairs,
            judge_calls_computed=2 * q * all_pairs,
            ranking=board.sort(["bt", "system"], descending=[True, False])["system"].to_list()
            if rr
            else None,
        ),
        judge_calls_executed=memo.executed,
        swiss_saving=1.0 - len(played) / max(1, all_pairs),  # vs the N(N-1)/2 formula
        pairwise_rows=pairwise.height,
        error_rows=errors.height,
        error_reasons=dict(reasons.most_common(10)),
        schemes=dict(Counter(pairwise["scheme"].drop_nulls().to_list())),
        order_agreement=order_agreement(pairwise),
        kendall_swiss_vs_rr=_tau(by_system["elo"].to_list(), by_system["bt"].to_list())
        if rr
        else None,
        kendall_swiss_vs_rr_elo=_tau(by_system["elo"].to_list(), by_system["elo_rr"].to_list())
        if rr
        else None,
        bootstrap=BootstrapSettings(
            replicates=tp.bootstrap, seed=tp.seed, level=0.95, unit="questions"
        ),
        bt_basis="all judged pairs (round-robin)" if rr else "Swiss pairs only",
    )
