"""One judge configuration on the prepared answers: its judge and tournament stages, then the
measures."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import polars as pl

from benchmarks.meta_eval.measures import gap_curve, order_measures
from benchmarks.meta_eval.project import stage_calls
from benchmarks.meta_eval.results import ConfigResult
from benchmarks.meta_eval.systems import CONFIGS, CURVE_PAIRS, DIRECT_VERSION, SENTENCE_REFERENCE
from ragcourt.core import catalog
from ragcourt.core.io import read_table, write_parquet
from ragcourt.llm.gateway import Gateway
from ragcourt.orchestration.params import Params
from ragcourt.tournament.pairwise import PairwiseContext
from ragcourt.tournament.swiss import Pair


def sentence_references(qa: pl.DataFrame) -> pl.DataFrame:
    """``qa`` with each reference answer replaced by the span's sentence (``long_reference``),
    where the QA item has one."""
    if "long_reference" not in qa.columns:
        return qa
    return qa.with_columns(
        pl.when(pl.col("long_reference").is_not_null())
        .then(pl.concat_list(pl.col("long_reference")))
        .otherwise(pl.col("reference_answers"))
        .alias("reference_answers")
    )


def evaluate(
    params: Params,
    name: str,
    judge_model: str,
    ns: Sequence[int],
    n_boot: int,
    seed: int,
    max_questions: int | None = None,
    direct_version: str = DIRECT_VERSION,
    gap_pairs: Callable[[dict[str, float]], Sequence[Pair]] = lambda _elo: CURVE_PAIRS,
    swiss_only: bool = False,
) -> ConfigResult:
    """One judge configuration on the prepared answers: judge + tournament stages, measures;
    ``gap_pairs(elo)`` names the pairs whose Elo-gap interval the curve reports."""
    from ragcourt.judging import answers_stage
    from ragcourt.tournament import stage as tournament

    kind, mode = CONFIGS[name]
    p = params.model_copy(deep=True)
    p.tournament.judge = kind
    if name == "llm-direct":
        p.tournament.analysis = False
        p.tournament.prompt_version = direct_version
    p.tournament.model = judge_model
    if swiss_only:  # the Swiss rounds only: ceil(log2 N) + 1 rounds, no round-robin pass
        p.tournament.round_robin = False
    p.judge.correctness_model = judge_model
    if mode is not None:
        p.judge.correctness_mode = mode
    qa_path = catalog.path("qa")
    full_qa = read_table(qa_path, "qa")
    qa = full_qa.head(max_questions) if max_questions else full_qa
    rewrite = bool(max_questions) or name in SENTENCE_REFERENCE
    if name in SENTENCE_REFERENCE:
        qa = sentence_references(qa)
    t0 = time.perf_counter()
    try:
        if rewrite:  # the stages read the QA table: the configuration's form of it
            write_parquet(qa, qa_path, "qa")
        if mode is not None:
            answers_stage.run(p)
        tournament.run(p)
        wall = time.perf_counter() - t0
        calls = stage_calls(p.llm.metrics_dir, ["judge", "tournament"])
        board = read_table(catalog.path("leaderboard"), "leaderboard")
        elo = dict(zip(board["system"].to_list(), board["elo"].to_list(), strict=True))
        hits, acc, tau = order_measures(elo)
        answers = read_table(catalog.path("answers"), "answers")
        ctx = PairwiseContext(
            p, answers=answers, qa=qa,
            read_correctness=lambda: read_table(catalog.path("correctness"), "correctness"),
            shared_gateway=Gateway(p.llm, stage="meta_eval"),
        )  # fmt: skip
        usable = [n for n in ns if n < qa.height] + [qa.height]
        curve, curve_elo = gap_curve(
            p, ctx, kind, sorted(set(usable)), n_boot, seed, gap_pairs(elo)
        )
    finally:
        if rewrite:
            write_parquet(full_qa, qa_path, "qa")
    return ConfigResult(
        name=name, tournament_judge=kind, correctness_mode=mode, judge_model=judge_model,
        questions=qa.height, elo={s: round(e, 1) for s, e in elo.items()}, pairs=hits,
        pairwise_accuracy=round(acc, 3), kendall_tau_b=None if tau is None else round(tau, 3),
        curve=curve, curve_elo=curve_elo, calls=calls, wall_s=round(wall, 1),
    )  # fmt: skip
