"""Stage ``judge`` (spec §4, 5): DAFE verdicts and answer correctness of every answer.

Writes ``verdicts.parquet`` (DAFE: two primaries, the arbitrator on disagreement) and
``correctness.parquet`` (the grader ``judge.correctness_mode`` names). Answers with an
``error`` (or a question missing from the QA set) are carried as error rows and not judged;
those of a control system never fail the stage (:mod:`ragcourt.core.failures`).
Every model call goes through the gateway cache, so a re-run makes no model calls.

Sharded (``scale.shard_questions`` > 0; :mod:`ragcourt.judging.shard_plan`): each (system,
question block) is judged into its own files under ``data/judge/shards/judge/``;
``run(params, system, block)`` judges one (a Prefect task, :func:`shards` lists them),
``run(params)`` judges the shards not done and merges them into the same two tables.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, cast

import polars as pl

from ragcourt.core import catalog
from ragcourt.core.control_kinds import controls_of
from ragcourt.core.failures import assess, enforce
from ragcourt.core.io import read_table, write_parquet
from ragcourt.core.schemas import TABLES
from ragcourt.core.shards import Shard, rows_digest, shard_key
from ragcourt.judging import shard_plan
from ragcourt.judging.builders import build_grader, build_judges, check_judge_params
from ragcourt.judging.dafe import DafeDecision, run_dafe
from ragcourt.judging.params import JudgingView
from ragcourt.judging.stage_inputs import read_answers_and_qa
from ragcourt.judging.vocabulary import (
    AnswerItem,
    AnswerVerdict,
    CorrectnessGrade,
    JudgeContext,
    VerdictsOf,
)

if TYPE_CHECKING:
    from polars._typing import SchemaDict

log = logging.getLogger("ragcourt.judge")


def judge_inputs(answers: pl.DataFrame, qa: pl.DataFrame) -> pl.DataFrame:
    """Answers joined to their question and references, with ``input_error`` set where the
    row cannot be judged (the answer failed, or its question is not in the QA set)."""
    joined = answers.select("system", "question_id", "answer", "abstained", "error").join(
        qa.select("question_id", "question", "reference_answers"), on="question_id", how="left"
    )
    qa_path = catalog.path("qa")
    return joined.with_columns(
        pl.when(pl.col("error").is_not_null())
        .then(pl.concat_str(pl.lit("answer failed: "), pl.col("error")))
        .when(pl.col("question").is_null())
        .then(
            pl.concat_str(
                pl.lit("question_id '"), pl.col("question_id"), pl.lit(f"' is not in {qa_path}")
            )
        )
        .when(pl.col("answer").is_null())
        .then(pl.lit("answer is null"))
        .alias("input_error")
    ).drop("error")


def to_items(rows: pl.DataFrame) -> list[AnswerItem]:
    return [
        AnswerItem(r["question"], r["answer"], tuple(r["reference_answers"] or ()))
        for r in rows.iter_rows(named=True)
    ]


def _role_cols(prefix: str, v: AnswerVerdict | None) -> dict[str, Any]:
    return {
        f"{prefix}_judge": v.judge if v else None,
        f"{prefix}_verdict": v.verdict if v else None,
        f"{prefix}_score": v.score if v else None,
        f"{prefix}_justification": v.justification if v else None,
        f"{prefix}_error": v.error if v else None,
        f"{prefix}_form": v.form if v else None,
    }


def verdicts_frame(inputs: pl.DataFrame, decisions: dict[int, DafeDecision]) -> pl.DataFrame:
    """The ``verdicts`` table: one row per input row; judged rows from ``decisions`` (by
    row index), the others error rows with the input error."""
    rows: list[dict[str, Any]] = []
    for i, r in enumerate(inputs.iter_rows(named=True)):
        o = decisions.get(i)
        row: dict[str, Any] = {
            "system": r["system"],
            "question_id": r["question_id"],
            "abstained": r["abstained"],
        }
        row |= _role_cols("primary1", o.primary1 if o else None)
        row |= _role_cols("primary2", o.primary2 if o else None)
        row |= _role_cols("arbitrator", o.arbitrator if o else None)
        row |= {
            "agree": o.agree if o else None,
            "arbitrator_called": (o.arbitrator is not None) if o else False,
            "final_verdict": o.final if o else None,
            "resolution": o.resolution if o else "error",
            "error": (o.error if o else r["input_error"]),
        }
        rows.append(row)
    return pl.DataFrame(rows, schema=cast("SchemaDict", TABLES["verdicts"]), orient="row")


def _verdicts_of(
    items: Sequence[AnswerItem], decisions: Sequence[DafeDecision], ctx: JudgeContext
) -> VerdictsOf:
    """Verdicts a grader may ask for by judge name: the DAFE primaries' (no second pass),
    any other judge run on ``items`` when first asked."""
    jp = ctx.params.judge
    known: dict[str, Sequence[AnswerVerdict]] = {
        jp.primaries[0]: [d.primary1 for d in decisions],
        jp.primaries[1]: [d.primary2 for d in decisions],
    }

    def verdicts_of(name: str) -> Sequence[AnswerVerdict]:
        if name not in known:
            known[name] = build_judges([name], ctx)[name].judge(items)
        return known[name]

    return verdicts_of


def correctness_frame(inputs: pl.DataFrame, graded: dict[int, CorrectnessGrade]) -> pl.DataFrame:
    """The ``correctness`` table: one row per input row; graded rows from ``graded`` (by
    row index), the others null with the input error."""
    score, rationale, error, form, method = [], [], [], [], []
    for i, in_err in enumerate(inputs["input_error"].to_list()):
        g = graded.get(i)
        score.append(g.score if g else None)
        rationale.append(g.rationale if g else None)
        error.append(g.error if g else in_err)
        form.append(g.form if g else None)
        method.append(g.method if g else None)
    return inputs.select("system", "question_id").with_columns(
        pl.Series("correctness", score, dtype=pl.Float64),
        pl.Series("rationale", rationale, dtype=pl.String),
        pl.Series("error", error, dtype=pl.String),
        pl.Series("form", form, dtype=pl.String),
        pl.Series("grading_method", method, dtype=pl.String),
    )


def judge_answers(inputs: pl.DataFrame, ctx: JudgeContext) -> tuple[pl.DataFrame, pl.DataFrame]:
    """DAFE verdicts and correctness grades for every judgeable input row."""
    jp = ctx.params.judge
    check_judge_params(jp)  # an unknown kind fails before any model call
    judges = build_judges([*jp.primaries, jp.arbitrator], ctx)
    grader = build_grader(ctx)  # so do bad settings
    ok_idx = [i for i, e in enumerate(inputs["input_error"].to_list()) if e is None]
    items = to_items(inputs[ok_idx])
    p1, p2 = (judges[n] for n in jp.primaries)
    decisions = run_dafe(items, p1, p2, judges[jp.arbitrator])
    verdicts = verdicts_frame(inputs, dict(zip(ok_idx, decisions, strict=True)))
    graded = grader.grade(items, _verdicts_of(items, decisions, ctx)) if items else []
    correctness = correctness_frame(inputs, dict(zip(ok_idx, graded, strict=True)))
    return verdicts, correctness


SHARDS = "judge_shards"  # the catalog artifact of the shard folder
SHARD_TABLES = ("verdicts", "correctness")
#: the judge.<key> params the stage reads (a shard's key holds them)
JUDGE_KEYS = (
    "judges",
    "primaries",
    "arbitrator",
    "correctness_mode",
    "correctness_settings",
    "correctness_model",
    "trained_weights",
    "prompt_version",
    "relevance_grader",
    "reason",
)


def shards(params: JudgingView) -> list[Shard]:
    """The stage's shard tasks: one per (system, question block) of the answers table; none
    when ``scale.shard_questions`` is 0."""
    size = params.scale.shard_questions
    if size <= 0:
        return []
    answers = read_table(catalog.path("answers"), "answers", columns=["system"])
    return [s.task(SHARDS, SHARD_TABLES) for s in shard_plan.by_system(answers, size)]


def judge_in_shards(
    inputs: pl.DataFrame, ctx: JudgeContext, system: str | None = None, block: int | None = None
) -> tuple[pl.DataFrame, pl.DataFrame] | None:
    """Judge the shards of ``inputs`` that are not done (only shard ``system#block`` when
    ``block`` is given: then None), then merge every shard into the two tables."""
    plan = shard_plan.by_system(inputs, ctx.params.scale.shard_questions)
    chosen = plan if block is None else [shard_plan.select(plan, system, block, "judge")]
    record = shard_plan.settings(ctx.params, JUDGE_KEYS, embedders=True)
    for shard in chosen:
        rows = shard_plan.rows_of(inputs, shard)
        key = shard_key({"stage": "judge", "settings": record, "rows": rows_digest(rows)})
        shard_plan.judge_shard(
            "judge", SHARDS, shard, key, partial(judge_answers, rows, ctx), SHARD_TABLES
        )
    if block is not None:
        return None
    return _merged(plan, "verdicts"), _merged(plan, "correctness")


def _merged(plan: list[shard_plan.RowShard], table: str) -> pl.DataFrame:
    return shard_plan.in_input_order(shard_plan.merge_shards(plan, SHARDS, table), plan)


def run(params: JudgingView, system: str | None = None, block: int | None = None) -> None:
    """Stage ``judge``: verdicts and correctness of every answer (paths relative to the cwd);
    sharded when ``scale.shard_questions`` > 0 (``block``: that shard only)."""
    answers, qa = read_answers_and_qa()
    ctx = JudgeContext(params, stage="judge")
    inputs = judge_inputs(answers, qa)
    judged = shard_plan.judged_tables(
        ctx,
        SHARDS,
        block,
        lambda: judge_in_shards(inputs, ctx, system, block),
        lambda: judge_answers(inputs, ctx),
    )
    if judged is None:  # one shard of a Prefect run
        return
    verdicts, correctness = judged
    write_parquet(verdicts, catalog.path("verdicts"), "verdicts")
    write_parquet(correctness, catalog.path("correctness"), "correctness")
    ctx.gateway.write_metrics()
    log.info("judge: step %s done", "answers")
    controls = controls_of(answers)  # a control's error rows never fail the stage
    enforce(
        "judge",
        [
            assess("verdicts", verdicts, controls=controls),
            assess("correctness", correctness, controls=controls),
        ],
        params.failure,
    )
