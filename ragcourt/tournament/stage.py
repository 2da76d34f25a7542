"""DVC stage ``tournament``: DICE pairwise judging, Swiss tournament with Elo, round-robin,
Bradley-Terry and bootstrap CIs (spec §6).

Inputs: ``data/answers/answers.parquet`` (every system's answers), ``data/qa/qa.parquet``,
and ``data/judge/correctness.parquet`` when ``tournament.judge`` is ``correctness_margin``.
Outputs under ``data/tournament/``: ``pairwise.parquet`` (every (pair, question) judged, both
orders), ``matches.parquet`` (Swiss and round-robin matches with Elo before/after),
``leaderboard.parquet`` (with a ``control`` column: the system's control kind, null for a
real system) + ``leaderboard.png`` and ``summary.json``
(:class:`~ragcourt.tournament.summaries.TournamentSummary`: judge calls used by Swiss vs
round-robin, error counts, Kendall τ-b between the Swiss and round-robin rankings).
The pairwise ``margin`` column is ΔP = P_max − P_second; the hard/soft threshold it is
compared with (``tournament.margin``) is ``margin_threshold`` in summary.json. Judge-call
counts are measured (match records, memo); figures from a formula end in ``_computed``, and
round-robin's measured fields are null when ``tournament.round_robin`` is off. The
leaderboard's ``matches`` = wins + ties + losses (matches with a valid judgement);
``failed_matches`` counts Swiss matches where every judgement failed.
Both schedules share one judgement memo, so a pair is judged once whichever needs it first;
the round-robin ranking is its Bradley-Terry fit (for a complete round-robin this orders
systems like their total scores). The tournament itself, apart from I/O, is
:func:`ragcourt.tournament.runner.run_tournament`.

Single-system mode:
``python -m stages tournament --single SYSTEM --reference-leaderboard PATH`` plays
SYSTEM against the high / mid / low systems of an earlier leaderboard and writes
``data/tournament/single/<SYSTEM>.parquet`` and ``.json`` (see ragcourt.tournament.single_system).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import polars as pl

from ragcourt.core import catalog
from ragcourt.core.control_kinds import controls_of
from ragcourt.core.entry import log
from ragcourt.core.errors import RagcourtError, SchemaError
from ragcourt.core.failures import TableFailures, assess, enforce
from ragcourt.core.io import read_table, write_json, write_parquet, write_with
from ragcourt.core.schemas import check_one_row_per_answer
from ragcourt.llm.gateway import Gateway
from ragcourt.tournament import single_system
from ragcourt.tournament.builders import build_pairwise_judge
from ragcourt.tournament.memo import JudgementMemo
from ragcourt.tournament.pairwise import PairwiseContext, PairwiseJudge
from ragcourt.tournament.params import TournamentView
from ragcourt.tournament.runner import rank_labels, run_tournament

ANSWERS = catalog.path("answers")
QA = catalog.path("qa")
CORRECTNESS = catalog.path("correctness")


def systems_and_questions(answers: pl.DataFrame, qa: pl.DataFrame) -> tuple[list[str], list[str]]:
    """Sorted system names and the QA question ids; one-line errors for unusable input."""
    check_one_row_per_answer(answers, str(ANSWERS), "answer")
    systems = sorted(answers["system"].unique().to_list())
    if len(systems) < 2:
        raise RagcourtError(f"{ANSWERS}: a tournament needs at least 2 systems, found {systems}")
    questions = qa["question_id"].to_list()
    if not questions:
        raise RagcourtError(f"{QA}: no questions")
    if len(set(questions)) != len(questions):
        raise SchemaError(f"{QA}: duplicate question_id values")
    return systems, questions


def plot_leaderboard(board: pl.DataFrame, path: Path, origin: float) -> None:
    """Two panels, Swiss Elo and Bradley-Terry, each with its bootstrap 95% CI as error bars;
    a dotted line at the rating origin (``tournament.initial_elo``) and at the mean BT."""
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
        ax.axvline(origin if col == "elo" else np.nanmean(mid), color="grey", lw=0.5, ls=":")
        ax.set_title(f"{title} (95% bootstrap CI)")
        ax.set_xlabel("rating (Elo scale)")
        ax.grid(axis="x", alpha=0.3)
    axes[0].set_yticks(y, rank_labels(b))
    fig.tight_layout()
    write_with(path, lambda tmp: fig.savefig(tmp, format="png", dpi=120))
    plt.close(fig)


def _context(
    params: TournamentView, gateway: Gateway, answers: pl.DataFrame, qa: pl.DataFrame
) -> PairwiseContext:
    """The judge factories' context; the correctness table is read only when the judge
    reads it (``correctness_margin``)."""
    return PairwiseContext(
        params,
        answers=answers,
        qa=qa,
        read_correctness=lambda: read_table(CORRECTNESS, "correctness"),
        shared_gateway=gateway,
    )


def run(
    params: TournamentView,
    single: str | None = None,
    reference_leaderboard: str | Path | None = None,
) -> None:
    """The whole stage (paths relative to the cwd); single-system mode when ``single`` is set.

    The gateway's accounting goes to data/metrics/llm_tournament.json (zero calls for a
    non-LLM judge), or llm_tournament_single.json in single-system mode.
    """
    gateway = Gateway(params.llm, stage="tournament" if single is None else "tournament_single")
    answers, qa = read_table(ANSWERS, "answers"), read_table(QA, "qa")
    systems, questions = systems_and_questions(answers, qa)
    judge = build_pairwise_judge(params.tournament.judge, _context(params, gateway, answers, qa))
    try:
        if single is not None:
            _run_single(params, judge, single, reference_leaderboard, systems, questions)
            return
        out = run_tournament(judge, systems, questions, params.tournament, controls_of(answers))
    finally:
        gateway.write_metrics()
    write_parquet(out.pairwise, catalog.path("pairwise"), "pairwise")
    write_parquet(out.matches, catalog.path("matches"), "matches")
    write_parquet(out.leaderboard, catalog.path("leaderboard"), "leaderboard")
    plot_leaderboard(
        out.leaderboard, catalog.path("leaderboard_plot"), params.tournament.initial_elo
    )
    write_json(out.summary.model_dump(mode="json"), catalog.path("tournament_summary"))
    s = out.summary
    rr = s.round_robin
    log.info(
        "tournament: %d systems, Swiss %d matches vs round-robin %s; %d judge errors; top: %s",
        s.n_systems,
        s.swiss.matches,
        rr.matches if rr.enabled else f"off ({rr.matches_computed} computed)",
        s.error_rows,
        s.best_system or s.outcome,
    )
    enforce("tournament", pairwise_failures(out.pairwise, controls_of(answers)), params.failure)


def pairwise_failures(
    pairwise: pl.DataFrame, controls: Mapping[str, str] | None = None
) -> list[TableFailures]:
    """Failed judgements overall, and per system (a row counts for both of its systems).

    The failure policy counts real systems only: a row with a control (``controls``:
    ``{system: kind}``) on either side counts for that control (logged, never fails the
    stage), not in the overall rate nor in a real system's per-system check."""
    kinds = dict(controls or {})
    with_control = pl.col("system_a").is_in(list(kinds)) | pl.col("system_b").is_in(list(kinds))
    real = pairwise.filter(~with_control)
    overall = assess("pairwise", real, group=None)
    by_system = assess("pairwise", _per_system(real), controls={})
    of_controls = assess("pairwise", _per_system(pairwise.filter(with_control)), controls=kinds)
    return [
        TableFailures(
            overall.table,
            overall.rows,
            overall.failed,
            by_system.groups,
            overall.reasons,
            of_controls.controls,
        )
    ]


def _per_system(pairwise: pl.DataFrame) -> pl.DataFrame:
    """``system``, ``error``: each pairwise row once for each of its two systems."""
    sides = [pairwise.select(pl.col(s).alias("system"), "error") for s in ("system_a", "system_b")]
    return pl.concat(sides, how="vertical")


def _run_single(
    params: TournamentView,
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
