"""Judging stage (SPEC 4, 5, 7): DAFE verdicts, answer correctness, passage relevance, UDCG.

Three steps, each its own DVC stage so a change re-runs only what depends on it:

* ``answers``   -> verdicts.parquet (DAFE: two primaries, arbitrator on disagreement) and
  correctness.parquet (RAGalyst 0-1 rubric). Answers with an ``error`` (or a question
  missing from the QA set) are carried as error rows and not judged.
* ``retrieval`` -> relevance.parquet (RAGElo 0/1/2 once per (question, chunk)),
  passage_utility.parquet (R, P(NO-RESPONSE), u per passage in any system's top k) and
  udcg.parquet (UDCG per (system, question)).
* ``summary``   -> per_question.parquet (every per-(system, question) measure side by side),
  system_summary.parquet, metric_correlation.parquet (Spearman/Kendall of each retrieval
  metric with end-to-end correctness over (system, question) pairs) and summary.json.

Span-rule IR metrics (nDCG/RR/Recall/Precision at ``udcg.k``) use the qrels of the chunking
each system retrieved from (``ragcourt.retrieval.span_relevance`` +
``ragcourt.retrieval.ir_metrics``). Every model call goes through the gateway cache, so a re-run
makes no model calls.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, Literal

import polars as pl

from ragcourt.core import catalog
from ragcourt.core.errors import RagcourtError
from ragcourt.core.io import read_table, write_json, write_parquet
from ragcourt.core.params import Params
from ragcourt.core.schemas import TABLES
from ragcourt.judging.agreement import rank_correlation
from ragcourt.judging.base import JudgeContext, JudgeItem, JudgeVerdict, build_judges
from ragcourt.judging.correctness import (
    grade_correctness,
    grade_correctness_expected,
    similarity_correctness,
)
from ragcourt.judging.dafe import DafeOutcome, dafe_summary, run_dafe
from ragcourt.judging.relevance import (
    judge_relevance,
    mrr_per_question,
    retrieved_passages,
    unique_passages,
)
from ragcourt.judging.udcg import (
    abstention_probabilities,
    fit_udcg_theta,
    udcg_per_question,
    utility_table,
)

log = logging.getLogger("ragcourt.judge")

Step = Literal["answers", "retrieval", "summary", "all"]
STEPS: tuple[Step, ...] = ("answers", "retrieval", "summary")

ANSWERS_PATH = catalog.path("answers")
QA_PATH = catalog.path("qa")
VERDICTS_PATH = catalog.path("verdicts")
CORRECTNESS_PATH = catalog.path("correctness")
RELEVANCE_PATH = catalog.path("relevance")
UTILITY_PATH = catalog.path("passage_utility")
UDCG_PATH = catalog.path("udcg")
PER_QUESTION_PATH = catalog.path("per_question")
SYSTEM_SUMMARY_PATH = catalog.path("system_summary")
CORRELATION_PATH = catalog.path("metric_correlation")
SUMMARY_PATH = catalog.path("judge_summary")

MRR_K = 5  # RAGElo reports MRR@5
ROLES = ("primary1", "primary2", "arbitrator")
SPAN_MEASURES = {"ndcg": "nDCG", "rr": "RR", "recall": "R", "precision": "P"}  # ir-measures


# ------------------------------------------------------------------ inputs


def judge_inputs(answers: pl.DataFrame, qa: pl.DataFrame) -> pl.DataFrame:
    """Answers joined to their question and references, with ``input_error`` set where the
    row cannot be judged (the answer failed, or its question is not in the QA set)."""
    joined = answers.select("system", "question_id", "answer", "abstained", "error").join(
        qa.select("question_id", "question", "reference_answers"), on="question_id", how="left"
    )
    return joined.with_columns(
        pl.when(pl.col("error").is_not_null())
        .then(pl.concat_str(pl.lit("answer failed: "), pl.col("error")))
        .when(pl.col("question").is_null())
        .then(
            pl.concat_str(
                pl.lit("question_id '"), pl.col("question_id"), pl.lit(f"' is not in {QA_PATH}")
            )
        )
        .when(pl.col("answer").is_null())
        .then(pl.lit("answer is null"))
        .alias("input_error")
    ).drop("error")


def to_items(rows: pl.DataFrame) -> list[JudgeItem]:
    return [
        JudgeItem(r["question"], r["answer"], tuple(r["reference_answers"] or ()))
        for r in rows.iter_rows(named=True)
    ]


# ------------------------------------------------------------------ step: answers


def _role_cols(prefix: str, v: JudgeVerdict | None) -> dict[str, Any]:
    return {
        f"{prefix}_judge": v.judge if v else None,
        f"{prefix}_verdict": v.verdict if v else None,
        f"{prefix}_score": v.score if v else None,
        f"{prefix}_justification": v.justification if v else None,
        f"{prefix}_error": v.error if v else None,
    }


def verdicts_frame(inputs: pl.DataFrame, outcomes: dict[int, DafeOutcome]) -> pl.DataFrame:
    """The ``verdicts`` table: one row per input row; judged rows from ``outcomes`` (by
    row index), the others error rows with the input error."""
    rows: list[dict[str, Any]] = []
    for i, r in enumerate(inputs.iter_rows(named=True)):
        o = outcomes.get(i)
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
    return pl.DataFrame(rows, schema=TABLES["verdicts"], orient="row")


def _similarity_verdicts(
    items: list[JudgeItem], results: list[DafeOutcome], ctx: JudgeContext
) -> list[JudgeVerdict]:
    """Verdicts of ``judge.correctness_judge``: reused from DAFE when it is a primary (no
    second embedding pass), else run on the items."""
    jp = ctx.params.judge
    if jp.correctness_judge == jp.primaries[0]:
        return [r.primary1 for r in results]
    if jp.correctness_judge == jp.primaries[1]:
        return [r.primary2 for r in results]
    return build_judges([jp.correctness_judge], ctx)[jp.correctness_judge].judge(items)


def judge_answers(inputs: pl.DataFrame, ctx: JudgeContext) -> tuple[pl.DataFrame, pl.DataFrame]:
    """DAFE verdicts and RAGalyst correctness for every judgeable input row."""
    jp = ctx.params.judge
    judges = build_judges([*jp.primaries, jp.arbitrator], ctx)
    ok_idx = [i for i, e in enumerate(inputs["input_error"].to_list()) if e is None]
    items = to_items(inputs[ok_idx])
    p1, p2 = (judges[n] for n in jp.primaries)
    results = run_dafe(items, p1, p2, judges[jp.arbitrator])
    verdicts = verdicts_frame(inputs, dict(zip(ok_idx, results, strict=True)))

    model = ctx.params.llm.resolve(jp.correctness_model)
    if not items:
        graded = []
    elif jp.correctness_mode == "similarity":
        graded = similarity_correctness(_similarity_verdicts(items, results, ctx))
    elif jp.correctness_mode == "expected":
        graded = grade_correctness_expected(
            items, ctx.gateway, model, jp.prompt_version, ctx.params.llm.seed
        )
    else:
        graded = grade_correctness(
            items,
            ctx.gateway,
            model,
            jp.prompt_version,
            ctx.params.llm.temperature,
            ctx.params.llm.seed,
        )
    by_idx = dict(zip(ok_idx, graded, strict=True))
    score, rationale, error = [], [], []
    for i, in_err in enumerate(inputs["input_error"].to_list()):
        g = by_idx.get(i)
        score.append(g.score if g else None)
        rationale.append(g.rationale if g else None)
        error.append(g.error if g else in_err)
    correctness = inputs.select("system", "question_id").with_columns(
        pl.Series("correctness", score, dtype=pl.Float64),
        pl.Series("rationale", rationale, dtype=pl.String),
        pl.Series("error", error, dtype=pl.String),
    )
    return verdicts, correctness


# ------------------------------------------------------------------ step: retrieval


def judge_retrieval(
    answers: pl.DataFrame, qa: pl.DataFrame, ctx: JudgeContext
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """Relevance of every retrieved passage, passage utilities for the top ``udcg.k`` and
    UDCG per (system, question); rows without passages (or whose question is not in the
    QA set) get a UDCG error row."""
    jp, llm = ctx.params.judge, ctx.params.llm
    known = answers.join(qa.select("question_id"), on="question_id", how="semi")
    passages = retrieved_passages(known)
    relevance = judge_relevance(
        unique_passages(passages),
        qa,
        ctx.gateway,
        llm.resolve(jp.relevance_model),
        jp.prompt_version,
        llm.temperature,
        llm.seed,
    )
    top = passages.filter(pl.col("rank") <= jp.udcg.k)
    probs = abstention_probabilities(
        unique_passages(top), qa, ctx.gateway, llm.resolve(jp.udcg.model), jp.prompt_version
    )
    utility = utility_table(relevance, probs, jp.udcg.relevance_threshold)
    per_q = udcg_per_question(top, utility, jp.udcg.gamma)
    udcg = (
        answers.select("system", "question_id")
        .join(per_q, on=["system", "question_id"], how="left")
        .with_columns(
            pl.col("n_passages").fill_null(0),
            pl.when(pl.col("n_passages").is_not_null())
            .then(pl.col("error"))
            .when(pl.col("question_id").is_in(qa["question_id"].implode()))
            .then(pl.lit("no retrieved passages"))
            .otherwise(pl.lit(f"question_id is not in {QA_PATH}"))
            .alias("error"),
        )
    )
    return relevance, utility, udcg


# ------------------------------------------------------------------ step: summary


def _chunks_by_chunking(params: Params, needed: set[str]) -> dict[str, pl.DataFrame]:
    out: dict[str, pl.DataFrame] = {}
    for name in params.chunkings:
        path = catalog.path("chunks", chunking=name)
        if path.is_file():
            out[name] = read_table(path, "chunks")
    missing = needed - {c for df in out.values() for c in df["chunk_id"].to_list()}
    if missing:
        log.warning("judge: %d retrieved chunk ids are in no chunks file", len(missing))
    return out


def span_metrics(answers: pl.DataFrame, qa: pl.DataFrame, params: Params, k: int) -> pl.DataFrame:
    """Per (system, question_id): ndcg/rr/recall/precision at ``k`` from the span rule on
    the chunking each system retrieved from. Empty frame when no chunks file exists;
    questions whose span maps to no chunk of that chunking stay null."""
    from ragcourt.retrieval.ir_metrics import evaluate
    from ragcourt.retrieval.span_relevance import qrels_from_spans

    cols = {"system": pl.String, "question_id": pl.String} | {
        f"{m}_at_k": pl.Float64 for m in SPAN_MEASURES
    }
    passages = retrieved_passages(answers, k)
    chunks = _chunks_by_chunking(params, set(passages["chunk_id"].to_list()))
    if not chunks or passages.is_empty():
        return pl.DataFrame(schema=cols)
    chunk_map = pl.concat(
        [df.select("chunk_id", pl.lit(name).alias("chunking")) for name, df in chunks.items()]
    )
    frames: list[pl.DataFrame] = []
    for (system,), sys_rows in passages.join(chunk_map, on="chunk_id", how="left").group_by(
        "system", maintain_order=True
    ):
        used = sys_rows["chunking"].drop_nulls().unique().to_list()
        if len(used) != 1:
            log.warning(
                "judge: system %s retrieved from chunkings %s; no span metrics", system, used
            )
            continue
        qrels = qrels_from_spans(qa, chunks[used[0]], params.retrieval.relevance)
        run = sys_rows.select(
            pl.col("question_id").alias("query_id"),
            "chunk_id",
            pl.col("rank").cast(pl.Int32),
            (-pl.col("rank").cast(pl.Float64)).alias("score"),
            pl.lit(system).alias("retriever"),
        )
        per = evaluate(run, qrels, [k])
        judged = qrels.filter(pl.col("relevance") > 0)["query_id"].unique()
        wide: dict[str, list[Any]] = {"question_id": judged.to_list()}
        for col, family in SPAN_MEASURES.items():
            vals = dict(
                per.filter(pl.col("measure") == f"{family}@{k}")
                .select("query_id", "value")
                .iter_rows()
            )
            wide[f"{col}_at_k"] = [float(vals.get(q, 0.0)) for q in wide["question_id"]]
        frames.append(pl.DataFrame(wide).with_columns(pl.lit(system).alias("system")))
    if not frames:
        return pl.DataFrame(schema=cols)
    return pl.concat(frames, how="diagonal").select(list(cols)).cast(cols)  # type: ignore[arg-type]


def per_question_table(
    answers: pl.DataFrame,
    verdicts: pl.DataFrame,
    correctness: pl.DataFrame,
    relevance: pl.DataFrame,
    udcg: pl.DataFrame,
    span: pl.DataFrame,
    params: Params,
) -> tuple[pl.DataFrame, dict[str, Any]]:
    """Every per-(system, question) measure side by side, plus the UDCGθ fit report."""
    keys = ["system", "question_id"]
    mrr = mrr_per_question(retrieved_passages(answers), relevance, MRR_K, (1, 2))
    t = (
        answers.select(*keys, "abstained")
        .join(verdicts.select(*keys, "final_verdict"), on=keys, how="left")
        .join(correctness.select(*keys, "correctness"), on=keys, how="left")
        .join(udcg.select(*keys, "udcg", "utilities"), on=keys, how="left")
        .join(
            mrr.select(
                *keys,
                f"rr1_at{MRR_K}",
                f"rr2_at{MRR_K}",
                pl.col("unjudged").alias("relevance_unjudged"),
            ),
            on=keys,
            how="left",
        )
        .join(span, on=keys, how="left")
    )
    theta_report: dict[str, Any] = {"fitted": False}
    theta_scores: list[float | None] = [None] * t.height
    up = params.judge.udcg
    if up.fit_theta:
        utilities = [
            u if s is not None else None
            for u, s in zip(t["utilities"].to_list(), t["udcg"].to_list(), strict=True)
        ]
        fit = fit_udcg_theta(
            utilities,
            t["correctness"].to_list(),
            t["question_id"].to_list(),
            up.k,
            up.theta_min_pairs,
            seed=params.llm.seed,
        )
        theta_report = {
            "fitted": fit.scores is not None,
            "k": fit.k,
            "pairs": fit.n_pairs,
            "alpha": fit.alpha,
            "beta": fit.beta,
            "reason": fit.reason,
            "target": "correctness",
            "scores": "out-of-fold (GroupKFold by question)",
        }
        if fit.scores is not None:
            theta_scores = fit.scores
    t = t.drop("utilities").with_columns(
        pl.Series("udcg_theta", theta_scores, dtype=pl.Float64),
        outcome_expr().alias("outcome"),
    )
    return t.select(list(TABLES["judge_per_question"])), theta_report


def outcome_expr() -> pl.Expr:
    """UDCG's three-level end-to-end outcome from ``final_verdict`` and ``abstained``:
    2 = judged correct, 1 = abstained (and not judged correct), 0 = judged incorrect.
    A row without a final verdict (answer or judge error) is null, also when it abstained,
    so error rows never enter the correlations."""
    verdict = pl.col("final_verdict")
    return (
        pl.when(verdict.is_null())
        .then(None)
        .when(verdict)
        .then(2)
        .when(pl.col("abstained"))
        .then(1)
        .otherwise(0)
        .cast(pl.Int8)
    )


CORRELATED = (
    "udcg",
    "udcg_theta",
    f"rr1_at{MRR_K}",
    f"rr2_at{MRR_K}",
    *(f"{m}_at_k" for m in SPAN_MEASURES),
)
TARGETS = ("correctness", "final_verdict", "outcome")


def metric_label(metric: str, k: int) -> str:
    """Human label of a per_question metric column."""
    labels = {
        "udcg": f"UDCG (k<={k})",
        "udcg_theta": f"UDCGθ (k<={k}, out-of-fold)",
        f"rr1_at{MRR_K}": f"MRR@{MRR_K}, LLM relevance >= 1",
        f"rr2_at{MRR_K}": f"MRR@{MRR_K}, LLM relevance >= 2",
        "ndcg_at_k": f"nDCG@{k}, span rule",
        "rr_at_k": f"MRR@{k}, span rule",
        "recall_at_k": f"Recall@{k}, span rule",
        "precision_at_k": f"Precision@{k}, span rule",
    }
    return labels.get(metric, metric)


def metric_correlation(per_q: pl.DataFrame, k: int) -> pl.DataFrame:
    """Spearman (with SE) and Kendall τ-b of each retrieval metric with each end-to-end
    target over the (system, question) pairs where both are known (``n``)."""
    rows = []
    for metric in CORRELATED:
        for target in TARGETS:
            x = per_q[metric].cast(pl.Float64).to_list()
            y = per_q[target].cast(pl.Float64).to_list()
            stats = rank_correlation([_nan(v) for v in x], [_nan(v) for v in y])
            rows.append(
                {"metric": metric, "label": metric_label(metric, k), "target": target} | stats
            )
    return pl.DataFrame(rows, schema=TABLES["metric_correlation"], orient="row")


def _nan(v: float | None) -> float:
    return float("nan") if v is None else float(v)


def system_summary(
    per_q: pl.DataFrame, verdicts: pl.DataFrame, correctness: pl.DataFrame, udcg: pl.DataFrame
) -> pl.DataFrame:
    """Per system: accuracy (final verdicts), correctness mean, MRR@5 at both thresholds,
    UDCG mean, span IR metrics, and the error counts behind each."""
    err = (
        verdicts.group_by("system")
        .agg(
            pl.col("final_verdict").is_null().sum().cast(pl.Int64).alias("verdict_errors"),
            pl.col("arbitrator_called").sum().cast(pl.Int64).alias("arbitrator_calls"),
        )
        .join(
            correctness.group_by("system").agg(
                pl.col("correctness").is_null().sum().cast(pl.Int64).alias("correctness_errors")
            ),
            on="system",
            how="full",
            coalesce=True,
        )
        .join(
            udcg.group_by("system").agg(
                pl.col("udcg").is_null().sum().cast(pl.Int64).alias("udcg_errors")
            ),
            on="system",
            how="full",
            coalesce=True,
        )
    )
    agg = per_q.group_by("system", maintain_order=True).agg(
        pl.len().cast(pl.Int64).alias("n_questions"),
        pl.col("final_verdict").drop_nulls().len().cast(pl.Int64).alias("n_verdicts"),
        pl.col("final_verdict").cast(pl.Float64).mean().alias("accuracy"),
        pl.col("correctness").mean().alias("correctness_mean"),
        pl.col("abstained").cast(pl.Float64).mean().alias("abstention_rate"),
        pl.col(f"rr1_at{MRR_K}").mean().alias(f"mrr1_at{MRR_K}"),
        pl.col(f"rr2_at{MRR_K}").mean().alias(f"mrr2_at{MRR_K}"),
        pl.col("relevance_unjudged").sum().cast(pl.Int64).alias("relevance_unjudged"),
        pl.col("udcg").mean().alias("udcg_mean"),
        *(pl.col(f"{m}_at_k").mean() for m in SPAN_MEASURES),
    )
    return agg.join(err, on="system", how="left").select(list(TABLES["system_summary"]))


def outcomes_from_verdicts(verdicts: pl.DataFrame) -> list[DafeOutcome]:
    """Rebuild DAFE outcomes from judged rows of the verdicts table (for the summary)."""
    out: list[DafeOutcome] = []
    for r in verdicts.filter(pl.col("primary1_judge").is_not_null()).iter_rows(named=True):
        vs = {
            role: JudgeVerdict(
                r[f"{role}_judge"],
                r[f"{role}_verdict"],
                r[f"{role}_justification"] or "",
                r[f"{role}_score"],
                r[f"{role}_error"],
            )
            if r[f"{role}_judge"] is not None
            else None
            for role in ROLES
        }
        out.append(
            DafeOutcome(
                vs["primary1"],
                vs["primary2"],
                vs["arbitrator"],  # type: ignore[arg-type]
                r["agree"],
                r["final_verdict"],
                r["resolution"],
                r["error"],
            )
        )
    return out


def summary_json(
    params: Params,
    verdicts: pl.DataFrame,
    correctness: pl.DataFrame,
    relevance: pl.DataFrame,
    udcg: pl.DataFrame,
    sys_summary: pl.DataFrame,
    correlation: pl.DataFrame,
    theta: dict[str, Any],
    llm_roles: tuple[bool, bool, bool],
) -> dict[str, Any]:
    jp = params.judge
    n_passage_rows = int(relevance["n_systems"].sum() or 0)
    grades = relevance["relevance"].value_counts()
    corr = correlation.filter(pl.col("target") == "correctness")
    return {
        "dafe": dafe_summary(outcomes_from_verdicts(verdicts), llm_roles)
        | {
            "primaries": jp.primaries,
            "arbitrator": jp.arbitrator,
            "answer_rows": verdicts.height,
            "input_error_rows": int(verdicts["primary1_judge"].is_null().sum()),
        },
        "accuracy_per_system": dict(sys_summary.select("system", "accuracy").iter_rows()),
        "correctness": {
            "mode": jp.correctness_mode,
            "model": (
                f"judge {jp.correctness_judge} (no LLM)"
                if jp.correctness_mode == "similarity"
                else params.llm.resolve(jp.correctness_model)
            ),
            "prompt_version": jp.prompt_version,
            "rows": correctness.height,
            "scored": int(correctness["correctness"].is_not_null().sum()),
            "errors": int(correctness["correctness"].is_null().sum()),
            "mean": correctness["correctness"].mean(),
        },
        "relevance": {
            "model": params.llm.resolve(jp.relevance_model),
            "unique_passages": relevance.height,
            "passage_rows_across_systems": n_passage_rows,
            "judgments_saved_by_dedup": n_passage_rows - relevance.height,
            "errors": int(relevance["relevance"].is_null().sum()),
            "grades": {
                ("error" if g is None else str(g)): int(n)
                for g, n in sorted(grades.iter_rows(), key=lambda r: (r[0] is None, r[0] or 0))
            },
        },
        "udcg": {
            "model": params.llm.resolve(jp.udcg.model),
            "gamma": jp.udcg.gamma,
            "k": jp.udcg.k,
            "relevance_threshold": jp.udcg.relevance_threshold,
            "rows": udcg.height,
            "scored": int(udcg["udcg"].is_not_null().sum()),
            "errors": int(udcg["udcg"].is_null().sum()),
            "mean": udcg["udcg"].mean(),
            "theta": theta,
        },
        "spearman_with_correctness": {
            r["label"]: {"spearman": r["spearman"], "se": r["spearman_se"], "n": r["n"]}
            for r in corr.iter_rows(named=True)
        },
    }


# ------------------------------------------------------------------ driver


def _read_inputs() -> tuple[pl.DataFrame, pl.DataFrame]:
    answers = read_table(ANSWERS_PATH, "answers")
    qa = read_table(QA_PATH, "qa")
    if answers.is_empty():
        raise RagcourtError(f"{ANSWERS_PATH}: no answers to judge")
    return answers, qa


def run(params: Params, step: Step = "all") -> None:
    """Run one step (or all three in order), paths relative to the cwd."""
    steps: Sequence[Step] = STEPS if step == "all" else (step,)
    answers, qa = _read_inputs()
    for s in steps:
        if s == "answers":
            ctx = JudgeContext(params, stage="judge")
            verdicts, correctness = judge_answers(judge_inputs(answers, qa), ctx)
            write_parquet(verdicts, VERDICTS_PATH, "verdicts")
            write_parquet(correctness, CORRECTNESS_PATH, "correctness")
            ctx.gateway.write_metrics()
        elif s == "retrieval":
            ctx = JudgeContext(params, stage="judge_retrieval")
            relevance, utility, udcg = judge_retrieval(answers, qa, ctx)
            write_parquet(relevance, RELEVANCE_PATH, "relevance")
            write_parquet(utility, UTILITY_PATH, "passage_utility")
            write_parquet(udcg, UDCG_PATH, "udcg")
            ctx.gateway.write_metrics()
        else:
            _summary(params, answers, qa)
        log.info("judge: step %s done", s)


def run_answers(params: Params) -> None:
    """Stage ``judge``: DAFE verdicts and correctness of every answer."""
    run(params, "answers")


def run_retrieval(params: Params) -> None:
    """Stage ``judge_retrieval``: passage relevance, passage utility and UDCG."""
    run(params, "retrieval")


def run_summary(params: Params) -> None:
    """Stage ``judge_summary``: per-question table, system summary, metric correlations."""
    run(params, "summary")


def _summary(params: Params, answers: pl.DataFrame, qa: pl.DataFrame) -> None:
    verdicts = read_table(VERDICTS_PATH, "verdicts")
    correctness = read_table(CORRECTNESS_PATH, "correctness")
    relevance = read_table(RELEVANCE_PATH, "relevance")
    udcg = read_table(UDCG_PATH, "udcg")
    k = params.judge.udcg.k
    span = span_metrics(answers, qa, params, k)
    per_q, theta = per_question_table(answers, verdicts, correctness, relevance, udcg, span, params)
    sys_sum = system_summary(per_q, verdicts, correctness, udcg)
    corr = metric_correlation(per_q, k)
    jp = params.judge
    judges = build_judges([*jp.primaries, jp.arbitrator], JudgeContext(params))
    roles = tuple(judges[n].uses_llm for n in (*jp.primaries, jp.arbitrator))
    write_parquet(per_q, PER_QUESTION_PATH, "judge_per_question")
    write_parquet(sys_sum, SYSTEM_SUMMARY_PATH, "system_summary")
    write_parquet(corr, CORRELATION_PATH, "metric_correlation")
    write_json(
        summary_json(params, verdicts, correctness, relevance, udcg, sys_sum, corr, theta, roles),
        SUMMARY_PATH,
    )  # type: ignore[arg-type]
