"""DVC stage ``tournament``: DICE pairwise judging, Swiss tournament with Elo, round-robin,
Bradley-Terry and bootstrap CIs (SPEC 6).

Inputs: ``data/answers/answers.parquet`` (every system's answers), ``data/qa/qa.parquet``,
and ``data/judge/correctness.parquet`` when ``tournament.judge`` is ``correctness_margin``.
Outputs under ``data/tournament/``: ``pairwise.parquet`` (every (pair, question) judged, both
orders), ``matches.parquet`` (Swiss and round-robin matches with Elo before/after),
``leaderboard.parquet`` + ``leaderboard.png`` and ``summary.json`` (judge calls used by Swiss
vs round-robin, error counts, Kendall τ-b between the Swiss and round-robin rankings).
The pairwise ``margin`` column is ΔP = P_max − P_second; the hard/soft threshold it is
compared with (``tournament.margin``) is ``margin_threshold`` in summary.json. Judge-call
counts are measured (match records, memo); figures from a formula end in ``_computed``, and
round-robin's measured fields are null when ``tournament.round_robin`` is off. The
leaderboard's ``matches`` = wins + ties + losses (matches with a valid judgement);
``failed_matches`` counts Swiss matches where every judgement failed.
Both schedules share one judgement memo, so a pair is judged once whichever needs it first;
the round-robin ranking is its Bradley-Terry fit (for a complete round-robin this orders
systems like their total scores).

Single-system mode: ``python -m ragcourt.tournament.stage --single SYSTEM --reference-leaderboard
PATH`` plays SYSTEM against the high / mid / low systems of an earlier leaderboard and writes
``data/tournament/single/<SYSTEM>.parquet`` and ``.json`` (see ragcourt.tournament.single_system).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
from scipy.stats import kendalltau

from ragcourt.core import catalog
from ragcourt.core.entry import log
from ragcourt.core.errors import RagcourtError, SchemaError
from ragcourt.core.io import read_table, write_json, write_parquet, write_with
from ragcourt.core.params import Params, TournamentParams
from ragcourt.core.schemas import TABLES
from ragcourt.llm.gateway import Gateway
from ragcourt.tournament import bootstrap, single_system
from ragcourt.tournament.pairwise_judges import (
    PAIRWISE_JUDGES,
    JudgeInputs,
    JudgementMemo,
    PairwiseJudge,
    make_judge,
)
from ragcourt.tournament.score_matrix import ScoreMatrix
from ragcourt.tournament.swiss import MatchRecord, TournamentResult, round_robin, swiss

ANSWERS = catalog.path("answers")
QA = catalog.path("qa")
CORRECTNESS = catalog.path("correctness")


@dataclass
class TournamentOutputs:
    pairwise: pl.DataFrame
    matches: pl.DataFrame
    leaderboard: pl.DataFrame
    summary: dict[str, Any]


def systems_and_questions(answers: pl.DataFrame, qa: pl.DataFrame) -> tuple[list[str], list[str]]:
    """Sorted system names and the QA question ids; one-line errors for unusable input."""
    dup = answers.filter(pl.struct("system", "question_id").is_duplicated())
    if dup.height:
        row = dup.row(0, named=True)
        raise SchemaError(
            f"{ANSWERS}: duplicate answer for system '{row['system']}', question "
            f"'{row['question_id']}'"
        )
    systems = sorted(answers["system"].unique().to_list())
    if len(systems) < 2:
        raise RagcourtError(f"{ANSWERS}: a tournament needs at least 2 systems, found {systems}")
    questions = qa["question_id"].to_list()
    if not questions:
        raise RagcourtError(f"{QA}: no questions")
    if len(set(questions)) != len(questions):
        raise SchemaError(f"{QA}: duplicate question_id values")
    return systems, questions


def _matches_frame(result: TournamentResult, name: str) -> pl.DataFrame:
    records = [{"tournament": name, **asdict(m)} for m in result.matches]
    return pl.DataFrame(records, schema=dict(TABLES["matches"]))


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


def _tau(x: list[float | None], y: list[float | None]) -> dict[str, float | None]:
    """Kendall τ-b over the systems rated in both lists (a system without a rating, e.g. a
    Bradley-Terry fit with no valid judgement, is left out); None below 2 systems."""
    both = [
        (a, b)
        for a, b in zip(x, y, strict=True)
        if a is not None and b is not None and np.isfinite(a) and np.isfinite(b)
    ]
    if len(both) < 2:
        return {"tau_b": None, "p_value": None}
    res = kendalltau([a for a, _ in both], [b for _, b in both])
    tau, p = float(res.statistic), float(res.pvalue)
    return {"tau_b": None if np.isnan(tau) else tau, "p_value": None if np.isnan(p) else p}


def run_tournament(
    judge: PairwiseJudge, systems: list[str], questions: list[str], tp: TournamentParams
) -> TournamentOutputs:
    """Swiss (+ round-robin), BT and bootstrap CIs on one judge; pure apart from judge calls."""
    memo = JudgementMemo(judge, questions, tp.margin)
    elo_kw = {"k": tp.k_factor, "upset_weighting": tp.upset_weighting, "initial": tp.initial_elo}
    sw = swiss(
        systems,
        memo.play_as("swiss"),
        tp.rounds,
        until_stable=tp.until_stable,
        seed=tp.seed,
        **elo_kw,
    )
    rr = round_robin(systems, memo.play_as("round_robin"), **elo_kw) if tp.round_robin else None
    pairwise = memo.pairwise_frame(judge.name)
    sm = ScoreMatrix.from_pairwise(pairwise, systems)
    bt = sm.fit_bt(anchor=tp.initial_elo)
    ci = bootstrap.intervals(sm, sw.schedule, tp.bootstrap, tp.seed, bt_pairs=None, **elo_kw)
    rec = _records(sw.matches, systems)
    board = pl.DataFrame(
        {
            "system": systems,
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
    matches = pl.concat(
        [_matches_frame(sw, "swiss"), *([_matches_frame(rr, "round_robin")] if rr else [])]
    )
    summary = _summary(judge.name, systems, questions, sw, rr, memo, pairwise, board, tp)
    return TournamentOutputs(pairwise, matches, board, summary)


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
) -> dict[str, Any]:
    n, q = len(systems), len(questions)
    played = [m for m in sw.matches if m.system_b is not None]
    rr_played = [m for m in rr.matches if m.system_b is not None] if rr else []
    errors = pairwise.filter(pl.col("error").is_not_null())
    reasons = Counter(e[:200] for e in errors["error"].to_list())
    by_system = board.sort("system")
    rr_rank = "bt" if rr else None
    all_pairs = n * (n - 1) // 2

    def used_calls(ms: list[MatchRecord]) -> int:
        # both presentation orders of every question of every match (valid + failed)
        return 2 * sum(m.n_questions + m.n_errors for m in ms)

    return {
        "judge": judge,
        "n_systems": n,
        "n_questions": q,
        "margin_threshold": tp.margin,
        "margin_note": "pairwise.margin is ΔP = P_max − P_second of the combined "
        "probabilities; ΔP >= margin_threshold scores hard, below it soft",
        "judge_call_unit": "one presentation order of one question of one pair "
        "(llm judge: one analysis call + one verdict call)",
        "judge_calls_note": "judge_calls: order-judgements the schedule's matches used, "
        "counted from its match records; judge_calls_executed: those first run for it (the "
        "rest were served from the shared memo); *_computed: formula, not measured",
        "swiss": {
            "rounds": sw.rounds_played,
            "stopped": sw.stopped,
            "matches": len(played),
            "failed_matches": sum(1 for m in played if m.n_questions == 0),
            "byes": len(sw.matches) - len(played),
            "judge_calls": used_calls(played),
            "judge_calls_executed": memo.executed_by.get("swiss", 0),
            "error_judgements": sum(m.n_errors for m in played),
            "ranking": sw.ranking(),
        },
        "round_robin": {
            "enabled": rr is not None,
            "matches": len(rr_played) if rr else None,
            "failed_matches": sum(1 for m in rr_played if m.n_questions == 0) if rr else None,
            "judge_calls": used_calls(rr_played) if rr else None,
            "judge_calls_executed": memo.executed_by.get("round_robin", 0) if rr else None,
            "error_judgements": sum(m.n_errors for m in rr_played) if rr else None,
            "matches_computed": all_pairs,
            "judge_calls_computed": 2 * q * all_pairs,
            "ranking": board.sort(["bt", "system"], descending=[True, False])["system"].to_list()
            if rr
            else None,
        },
        "judge_calls_executed": memo.executed,
        "swiss_saving": 1.0 - len(played) / max(1, all_pairs),  # vs the N(N-1)/2 formula
        "pairwise_rows": pairwise.height,
        "error_rows": errors.height,
        "error_reasons": dict(reasons.most_common(10)),
        "schemes": dict(Counter(pairwise["scheme"].drop_nulls().to_list())),
        "order_agreement": order_agreement(pairwise),
        "kendall_swiss_vs_rr": _tau(by_system["elo"].to_list(), by_system[rr_rank].to_list())
        if rr_rank
        else None,
        "kendall_swiss_vs_rr_elo": _tau(by_system["elo"].to_list(), by_system["elo_rr"].to_list())
        if rr
        else None,
        "bootstrap": {
            "replicates": tp.bootstrap,
            "seed": tp.seed,
            "level": 0.95,
            "unit": "questions",
        },
        "bt_basis": "all judged pairs (round-robin)" if rr else "Swiss pairs only",
    }


def plot_leaderboard(board: pl.DataFrame, path: Path) -> None:
    """Two panels, Swiss Elo and Bradley-Terry, each with its bootstrap 95% CI as error bars."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    b = board.sort("rank", descending=True)
    y = np.arange(b.height)
    fig, axes = plt.subplots(1, 2, figsize=(11, 1.2 + 0.45 * b.height), sharey=True)
    for ax, col, title in ((axes[0], "elo", "Swiss Elo"), (axes[1], "bt", "Bradley-Terry")):
        mid = b[col].fill_null(np.nan).to_numpy()
        lo = b[f"{col}_lo"].fill_null(np.nan).to_numpy()
        hi = b[f"{col}_hi"].fill_null(np.nan).to_numpy()
        err = np.vstack([np.clip(mid - lo, 0, None), np.clip(hi - mid, 0, None)])
        ax.errorbar(mid, y, xerr=np.nan_to_num(err), fmt="o", capsize=3)
        ax.axvline(1500.0 if col == "elo" else np.nanmean(mid), color="grey", lw=0.5, ls=":")
        ax.set_title(f"{title} (95% bootstrap CI)")
        ax.set_xlabel("rating (Elo scale)")
        ax.grid(axis="x", alpha=0.3)
    axes[0].set_yticks(y, [f"{r}. {s}" for r, s in b.select("rank", "system").iter_rows()])
    fig.tight_layout()
    write_with(path, lambda tmp: fig.savefig(tmp, format="png", dpi=120))
    plt.close(fig)


def _inputs(params: Params, gateway: Gateway) -> JudgeInputs:
    answers = read_table(ANSWERS, "answers")
    qa = read_table(QA, "qa")
    entry = PAIRWISE_JUDGES.get(params.tournament.judge)
    needs = entry is not None and entry.needs_correctness
    correctness = read_table(CORRECTNESS, "correctness") if needs else None
    return JudgeInputs(params, answers, qa, correctness, gateway)


def run(
    params: Params, single: str | None = None, reference_leaderboard: str | Path | None = None
) -> None:
    """The whole stage (paths relative to the cwd); single-system mode when ``single`` is set.

    The gateway's accounting goes to data/metrics/llm_tournament.json (zero calls for a
    non-LLM judge), or llm_tournament_single.json in single-system mode.
    """
    gateway = Gateway(params.llm, stage="tournament" if single is None else "tournament_single")
    inputs = _inputs(params, gateway)
    systems, questions = systems_and_questions(inputs.answers, inputs.qa)
    judge = make_judge(params.tournament.judge, inputs)
    try:
        if single is not None:
            _run_single(params, judge, single, reference_leaderboard, systems, questions)
            return
        out = run_tournament(judge, systems, questions, params.tournament)
    finally:
        gateway.write_metrics()
    write_parquet(out.pairwise, catalog.path("pairwise"), "pairwise")
    write_parquet(out.matches, catalog.path("matches"), "matches")
    write_parquet(out.leaderboard, catalog.path("leaderboard"), "leaderboard")
    plot_leaderboard(out.leaderboard, catalog.path("leaderboard_plot"))
    write_json(out.summary, catalog.path("tournament_summary"))
    s = out.summary
    rr = s["round_robin"]
    log.info(
        "tournament: %d systems, Swiss %d matches vs round-robin %s; %d judge errors; top: %s",
        s["n_systems"],
        s["swiss"]["matches"],
        rr["matches"] if rr["enabled"] else f"off ({rr['matches_computed']} computed)",
        s["error_rows"],
        out.leaderboard["system"][0],
    )


def _run_single(
    params: Params,
    judge: PairwiseJudge,
    system: str,
    reference_leaderboard: str | Path | None,
    systems: list[str],
    questions: list[str],
) -> None:
    if reference_leaderboard is None:
        raise RagcourtError("--single needs --reference-leaderboard PATH")
    if system not in systems:
        raise RagcourtError(f"{ANSWERS}: no answers from system '{system}' (have {systems})")
    board = read_table(reference_leaderboard, "leaderboard")
    tiers = single_system.reference_tiers(board, exclude=system, available=systems)
    memo = JudgementMemo(judge, questions, params.tournament.margin)
    table, summary = single_system.evaluate(system, tiers, memo)
    summary["reference_leaderboard"] = str(reference_leaderboard)
    summary["margin_threshold"] = params.tournament.margin  # pairwise margin column is ΔP
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", system)
    write_parquet(table, catalog.path("single_system_table", stem=stem))
    write_json(summary, catalog.path("single_system_summary", stem=stem))
    log.info(
        "single-system %s: Elo %.0f against %s", system, summary["elo"], tiers["system"].to_list()
    )
