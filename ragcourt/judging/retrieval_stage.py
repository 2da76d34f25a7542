"""Stage ``judge_retrieval`` (spec §5): passage relevance, passage utility and UDCG.

Writes ``relevance.parquet`` (RAGElo 0/1/2 once per (question, chunk) across systems, by the
``judge.relevance_grader``; the ``trained`` grader also gives UDCG's P(NO-RESPONSE)),
``passage_utility.parquet`` (R, P(NO-RESPONSE), u per passage in any system's top
``udcg.k``) and ``udcg.parquet`` (UDCG per (system, question)). Every model call goes
through the gateway cache, so a re-run makes no model calls. A system that returned no passages
at all is not judged and has no rows (:mod:`ragcourt.judging.retrieval_skips`); rows without
passages of a judged system are labelled, not counted as failed calls.
"""

from __future__ import annotations

import logging

import polars as pl

from ragcourt.core import catalog
from ragcourt.core.control_kinds import controls_of
from ragcourt.core.failures import assess, enforce
from ragcourt.core.io import write_parquet
from ragcourt.core.params import Params
from ragcourt.core.provenance import (
    NO_CONTEXTS_SUPPLIED,
    NO_RETRIEVED_PASSAGES,
    retrieval_gap,
)
from ragcourt.judging.builders import build_relevance_grader, check_judge_params
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
    answers: pl.DataFrame, qa: pl.DataFrame, ctx: JudgeContext
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """Relevance of every retrieved passage, passage utilities for the top ``udcg.k`` and
    UDCG per (system, question); rows without passages (or whose question is not in the
    QA set) get a UDCG error row, except a system without any passage: no rows at all."""
    jp, llm = ctx.params.judge, ctx.params.llm
    answers = answers.filter(~pl.col("system").is_in(systems_without_passages(answers)))
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


def run(params: Params) -> None:
    """Stage ``judge_retrieval`` (paths relative to the cwd)."""
    check_judge_params(params.judge)  # unknown kinds: one line before any model call
    answers, qa = read_answers_and_qa()
    for system in systems_without_passages(answers):
        log.info("judge_retrieval: %s: %s", system, NO_RETRIEVAL_JUDGING)
    ctx = JudgeContext(params, stage="judge_retrieval")
    relevance, utility, udcg = judge_retrieval(answers, qa, ctx)
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
