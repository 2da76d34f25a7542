"""Stage ``judge_retrieval`` (spec §5): passage relevance, passage utility and UDCG.

Writes ``relevance.parquet`` (RAGElo 0/1/2 once per (question, chunk) across systems, by the
``judge.relevance_grader``; the ``trained`` grader also gives UDCG's P(NO-RESPONSE)),
``passage_utility.parquet`` (R, P(NO-RESPONSE), u per passage in any system's top
``udcg.k``) and ``udcg.parquet`` (UDCG per (system, question)). Every model call goes
through the gateway cache, so a re-run makes no model calls. A system that returned no passages
at all is not judged and has no rows (:mod:`ragcourt.judging.retrieval_skips`); rows without
passages of a judged system are labelled, not counted as failed calls.

Sharded (``scale.shard_questions`` > 0; :mod:`ragcourt.judging.shard_plan`): each block of
questions, with every system's rows of them, is judged into its own files under
``data/judge/shards/judge_retrieval/``; ``run(params, block=b)`` judges one (a Prefect task,
:func:`shards` lists them), ``run(params)`` judges the blocks not done and merges them:
relevance and passage utility sorted by (question, chunk) as one call sorts them, UDCG in the
answers' order.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from functools import partial

import polars as pl

from ragcourt.core import catalog
from ragcourt.core.control_kinds import controls_of
from ragcourt.core.failures import assess, enforce
from ragcourt.core.io import read_table, write_parquet
from ragcourt.core.provenance import (
    NO_CONTEXTS_SUPPLIED,
    NO_RETRIEVED_PASSAGES,
    retrieval_gap,
)
from ragcourt.core.shards import Shard, rows_digest, shard_key
from ragcourt.judging import shard_plan
from ragcourt.judging.builders import build_relevance_grader, check_judge_params
from ragcourt.judging.params import JudgingView
from ragcourt.judging.relevance import retrieved_passages, unique_passages
from ragcourt.judging.retrieval_skips import NO_RETRIEVAL_JUDGING, systems_without_passages
from ragcourt.judging.stage_inputs import read_answers_and_qa
from ragcourt.judging.udcg import (
    NO_RESPONSE,
    abstention_probabilities,
    passage_udcg_requests,
    udcg_per_question,
    utility_table,
)
from ragcourt.judging.vocabulary import JudgeContext

log = logging.getLogger("ragcourt.judge")


def judge_retrieval(
    answers: pl.DataFrame,
    qa: pl.DataFrame,
    ctx: JudgeContext,
    skip: Sequence[str] | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """Relevance of every retrieved passage, passage utilities for the top ``udcg.k`` and
    UDCG per (system, question); rows without passages (or whose question is not in the
    QA set) get a UDCG error row, except a system without any passage (``skip``; default:
    those of ``answers``): no rows at all."""
    jp, llm = ctx.params.judge, ctx.params.llm
    skipped = list(systems_without_passages(answers) if skip is None else skip)
    answers = answers.filter(~pl.col("system").is_in(skipped))
    known = answers.join(qa.select("question_id"), on="question_id", how="semi")
    passages = retrieved_passages(known)
    all_passages = unique_passages(passages)
    top = passages.filter(pl.col("rank") <= jp.udcg.k)
    top_passages = unique_passages(top)
    grader = build_relevance_grader(ctx)
    udcg_model = llm.resolve(jp.udcg.model)
    rel_dists = udcg_dists = None
    own_probs = grader.no_response_probabilities(top_passages, qa)
    rel_group = grader.token_requests(all_passages, qa)
    if rel_group is not None and own_probs is None:
        # one batch for both judges: where the prompts share the question-and-passage prefix
        # (judge.yaml v4, v5) the UDCG call reuses the relevance call's KV state of the passage
        rel_dists, udcg_dists = ctx.gateway.next_token_probs_grouped(
            [
                rel_group,
                (
                    passage_udcg_requests(top_passages, qa, udcg_model, jp.prompt_version),
                    [NO_RESPONSE],
                ),
            ],
            desc="relevance+udcg",
        )
    relevance = grader.grade(all_passages, qa, rel_dists)
    probs = (
        own_probs
        if own_probs is not None
        else abstention_probabilities(
            top_passages, qa, ctx.gateway, udcg_model, jp.prompt_version, udcg_dists
        )
    )
    utility = utility_table(relevance, probs, jp.udcg.relevance_threshold)
    per_q = udcg_per_question(top, utility, jp.udcg.gamma)
    udcg = (
        answers.select("system", "question_id", retrieval_gap().alias("_gap"))
        .join(per_q, on=["system", "question_id"], how="left")
        .with_columns(
            pl.col("n_passages").fill_null(0),
            pl.when(pl.col("n_passages").is_not_null())
            .then(pl.col("error"))
            .when(pl.col("question_id").is_in(qa["question_id"].implode()))
            .then(pl.col("_gap").fill_null(NO_RETRIEVED_PASSAGES))  # external: no contexts
            .otherwise(pl.lit(f"question_id is not in {catalog.path('qa')}"))
            .alias("error"),
        )
        .drop("_gap")
    )
    return relevance, utility, udcg


def judged_udcg_rows(udcg: pl.DataFrame) -> pl.DataFrame:
    """The UDCG rows that count for the failure policy: a row without passages (no contexts
    supplied, no retrieved passages) is labelled, not a failed call."""
    gaps = [NO_CONTEXTS_SUPPLIED, NO_RETRIEVED_PASSAGES]
    return udcg.filter(~pl.col("error").is_in(gaps).fill_null(False))


SHARDS = "judge_retrieval_shards"  # the catalog artifact of the shard folder
SHARD_TABLES = ("relevance", "passage_utility", "udcg")
#: the judge.<key> params the stage reads (a shard's key holds them)
JUDGE_KEYS = (
    "relevance_grader",
    "relevance_settings",
    "relevance_model",
    "trained_weights",
    "prompt_version",
    "udcg",
    "judges",
    "correctness_mode",
)


def _judged_rows(answers: pl.DataFrame) -> tuple[pl.DataFrame, list[str]]:
    """The answers of systems with passages, and the systems without any."""
    skip = systems_without_passages(answers)
    return answers.filter(~pl.col("system").is_in(skip)), skip


def shards(params: JudgingView) -> list[Shard]:
    """The stage's shard tasks: one per block of questions; none when unsharded."""
    size = params.scale.shard_questions
    if size <= 0:
        return []
    columns = ["system", "question_id", "retrieved", "model"]
    kept, _ = _judged_rows(read_table(catalog.path("answers"), "answers", columns=columns))
    return [s.task(SHARDS, SHARD_TABLES) for s in shard_plan.by_question(kept, size)]


def judge_in_shards(
    answers: pl.DataFrame, qa: pl.DataFrame, ctx: JudgeContext, block: int | None = None
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame] | None:
    """Judge the question blocks that are not done (only ``block`` when given: then None),
    then merge every block into the three tables."""
    kept, skip = _judged_rows(answers)
    plan = shard_plan.by_question(kept, ctx.params.scale.shard_questions)
    chosen = plan if block is None else [shard_plan.select(plan, None, block, "judge_retrieval")]
    record = shard_plan.settings(ctx.params, JUDGE_KEYS, embedders=False)
    for shard in chosen:
        rows = shard_plan.rows_of(kept, shard)
        qa_rows = qa.join(rows.select("question_id").unique(), on="question_id", how="semi")
        digest = rows_digest(rows.select("system", "question_id", "retrieved", "model"))
        key = shard_key(
            {"stage": "judge_retrieval", "settings": record, "rows": digest,
             "qa": rows_digest(qa_rows)}
        )  # fmt: skip
        judged = partial(judge_retrieval, rows, qa, ctx, skip)
        shard_plan.judge_shard("judge_retrieval", SHARDS, shard, key, judged, SHARD_TABLES)
    if block is not None:
        return None
    relevance, utility, udcg = (shard_plan.merge_shards(plan, SHARDS, t) for t in SHARD_TABLES)
    by_passage = ["question_id", "chunk_id"]
    return (
        relevance.sort(by_passage),
        utility.sort(by_passage),
        shard_plan.in_input_order(udcg, plan),
    )


def run(params: JudgingView, block: int | None = None) -> None:
    """Stage ``judge_retrieval`` (paths relative to the cwd); sharded when
    ``scale.shard_questions`` > 0 (``block``: that question block only)."""
    check_judge_params(params.judge)  # unknown kinds: one line before any model call
    answers, qa = read_answers_and_qa()
    ctx = JudgeContext(params, stage="judge_retrieval")
    judged = shard_plan.judged_tables(
        ctx,
        SHARDS,
        block,
        lambda: judge_in_shards(answers, qa, ctx, block),
        lambda: judge_retrieval(answers, qa, ctx),
    )
    if judged is None:  # one shard of a Prefect run
        return
    relevance, utility, udcg = judged
    for system in systems_without_passages(answers):
        log.info("judge_retrieval: %s: %s", system, NO_RETRIEVAL_JUDGING)
    write_parquet(relevance, catalog.path("relevance"), "relevance")
    write_parquet(utility, catalog.path("passage_utility"), "passage_utility")
    write_parquet(udcg, catalog.path("udcg"), "udcg")
    ctx.gateway.write_metrics()
    log.info("judge: step %s done", "retrieval")
    enforce(
        "judge_retrieval",
        [
            assess("relevance", relevance, group=None),
            assess("passage_utility", utility, group=None),
            # a control's error rows never fail the stage
            assess("udcg", judged_udcg_rows(udcg), controls=controls_of(answers)),
        ],
        params.failure,
    )
