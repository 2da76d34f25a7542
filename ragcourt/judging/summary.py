"""Stage ``judge_summary`` (spec §5, 7): per-question table, system summary, metric
correlations and ``summary.json`` (:class:`~ragcourt.judging.summaries.JudgeSummary`).

Reads the outputs of stages ``judge`` and ``judge_retrieval`` plus the chunks (for the
span-rule IR metrics); makes no model call. ``summary.json`` also holds the DAFE
discrimination check on the control systems (:mod:`ragcourt.judging.discrimination`;
``controls.bootstrap`` / ``controls.seed``).
"""

from __future__ import annotations

import logging
from typing import Any

import polars as pl

from ragcourt.core import catalog
from ragcourt.core.control_kinds import controls_of
from ragcourt.core.io import read_table, write_json, write_parquet
from ragcourt.judging import retrieval_skips
from ragcourt.judging.builders import build_grader, build_judges, build_relevance_grader
from ragcourt.judging.dafe import DafeDecision, dafe_summary
from ragcourt.judging.discrimination import DafeDiscrimination, dafe_check
from ragcourt.judging.params import JudgingView
from ragcourt.judging.per_question import metric_correlation, per_question_table, system_summary
from ragcourt.judging.span_metrics import span_metrics
from ragcourt.judging.stage_inputs import read_answers_and_qa
from ragcourt.judging.summaries import (
    CorrectnessSection,
    DafeSection,
    GradingFallbacks,
    JudgeSummary,
    RelevanceSection,
    SpearmanWithCorrectness,
    ThetaFitReport,
    ThetaNotFitted,
    UdcgSection,
)
from ragcourt.judging.vocabulary import (
    CORRECTNESS_MODE,
    RELEVANCE_GRADER,
    AnswerVerdict,
    JudgeContext,
    source_of,
)
from ragcourt.llm.grading_methods import is_fallback

log = logging.getLogger("ragcourt.judge")

ROLES = ("primary1", "primary2", "arbitrator")


def _role_verdict(row: dict[str, Any], role: str) -> AnswerVerdict | None:
    if row[f"{role}_judge"] is None:
        return None
    return AnswerVerdict(
        row[f"{role}_judge"],
        row[f"{role}_verdict"],
        row[f"{role}_justification"] or "",
        row[f"{role}_score"],
        row[f"{role}_error"],
    )


def decisions_from_verdicts(verdicts: pl.DataFrame) -> list[DafeDecision]:
    """Rebuild the DAFE decisions of the judged rows of the verdicts table."""
    out: list[DafeDecision] = []
    for r in verdicts.filter(pl.col("primary1_judge").is_not_null()).iter_rows(named=True):
        p1, p2, arb = (_role_verdict(r, role) for role in ROLES)
        if p1 is None or p2 is None:
            raise ValueError(f"verdicts row {r['system']}/{r['question_id']} lacks a primary")
        out.append(
            DafeDecision(p1, p2, arb, r["agree"], r["final_verdict"], r["resolution"], r["error"])
        )
    return out


def form_counts(column: pl.Series) -> dict[str, int]:
    """Rows per form (``probability`` | ``generated``; null -> ``none``), sorted by name."""
    counts = column.fill_null("none").value_counts()
    return dict(sorted((str(f), int(n)) for f, n in counts.iter_rows()))


def _verdict_forms(verdicts: pl.DataFrame) -> dict[str, int]:
    """Forms of every LLM verdict in the DAFE roles (rows with a null form are not LLM)."""
    roles = ("primary1", "primary2", "arbitrator")
    forms = pl.concat([verdicts[f"{r}_form"] for r in roles]).drop_nulls()
    return form_counts(forms) if forms.len() else {}


def grading_fallbacks(methods: list[str | None]) -> GradingFallbacks:
    """Rows with a grading method (null: no LLM or not graded), how many are fallbacks."""
    known = [m for m in methods if m is not None]
    counts: dict[str, int] = {}
    for m in known:
        counts[m] = counts.get(m, 0) + 1
    bad = sum(any(is_fallback(p) for p in m.split(",")) for m in known)
    share = bad / len(known) if known else None
    return GradingFallbacks(rows=len(known), fallback_rows=bad, share=share, methods=counts)


def _column(table: pl.DataFrame, name: str) -> list[str | None] | None:
    """The grading methods of ``table`` (None: a table written before they were recorded)."""
    return table[name].to_list() if name in table.columns else None


def _context_methods(udcg: pl.DataFrame, name: str) -> list[str | None] | None:
    """Each UDCG context's grading method: its passages' distinct methods joined by ","."""
    contexts = _column(udcg, name)
    if contexts is None:
        return None
    return [(",".join(sorted({m for m in ms if m})) or None) if ms else None for ms in contexts]


def _mean(column: pl.Series) -> float | None:
    """Mean of a float column; None when it holds no non-null value."""
    value = column.mean()
    return float(value) if isinstance(value, int | float) else None


def _correctness_section(params: JudgingView, correctness: pl.DataFrame) -> CorrectnessSection:
    jp = params.judge
    grader = build_grader(JudgeContext(params))
    return CorrectnessSection(
        mode=CORRECTNESS_MODE.kind(params),
        model=source_of(grader, CORRECTNESS_MODE.kind(params)),
        prompt_version=jp.prompt_version,
        forms=form_counts(correctness["form"]),
        rows=correctness.height,
        scored=int(correctness["correctness"].is_not_null().sum()),
        errors=int(correctness["correctness"].is_null().sum()),
        mean=_mean(correctness["correctness"]),
    )


def _relevance_section(relevance: pl.DataFrame, source: str) -> RelevanceSection:
    n_passage_rows = int(relevance["n_systems"].sum() or 0)
    grades = relevance["relevance"].value_counts()
    return RelevanceSection(
        model=source,
        unique_passages=relevance.height,
        passage_rows_across_systems=n_passage_rows,
        judgments_saved_by_dedup=n_passage_rows - relevance.height,
        forms=form_counts(relevance["form"]),
        errors=int(relevance["relevance"].is_null().sum()),
        grades={
            ("error" if g is None else str(g)): int(n)
            for g, n in sorted(grades.iter_rows(), key=lambda r: (r[0] is None, r[0] or 0))
        },
    )


def _udcg_section(
    params: JudgingView, udcg: pl.DataFrame, theta: ThetaFitReport | ThetaNotFitted, source: str
) -> UdcgSection:
    settings = params.judge.udcg.model_dump(include={"gamma", "k", "relevance_threshold"})
    return UdcgSection(
        model=source,
        **settings,
        rows=udcg.height,
        scored=int(udcg["udcg"].is_not_null().sum()),
        errors=int(udcg["udcg"].is_null().sum()),
        mean=_mean(udcg["udcg"]),
        theta=theta,
    )


def judge_summary(
    params: JudgingView,
    verdicts: pl.DataFrame,
    correctness: pl.DataFrame,
    relevance: pl.DataFrame,
    udcg: pl.DataFrame,
    sys_summary: pl.DataFrame,
    correlation: pl.DataFrame,
    theta: ThetaFitReport | ThetaNotFitted,
    llm_roles: tuple[bool, bool, bool],
    discrimination: DafeDiscrimination | None = None,
    retrieval_not_judged: dict[str, str] | None = None,
) -> JudgeSummary:
    """The run's :class:`JudgeSummary` from the judge tables and the summary tables
    (``retrieval_not_judged``: system -> why its retrieval was not judged)."""
    jp = params.judge
    corr = correlation.filter(pl.col("target") == "correctness")
    grader = build_relevance_grader(JudgeContext(params))
    # the grader's own P(NO-RESPONSE), else UDCG's reader model
    abstention = getattr(grader, "abstention_source", None)
    dafe = dafe_summary(decisions_from_verdicts(verdicts), llm_roles) | {
        "primaries": jp.primaries,
        "arbitrator": jp.arbitrator,
        "answer_rows": verdicts.height,
        "input_error_rows": int(verdicts["primary1_judge"].is_null().sum()),
        "llm_verdict_forms": _verdict_forms(verdicts),
    }
    return JudgeSummary(
        dafe=DafeSection.model_validate(dafe),
        accuracy_per_system=dict(sys_summary.select("system", "accuracy").iter_rows()),
        correctness=_correctness_section(params, correctness),
        relevance=_relevance_section(relevance, source_of(grader, RELEVANCE_GRADER.kind(params))),
        udcg=_udcg_section(params, udcg, theta, abstention or params.llm.resolve(jp.udcg.model)),
        spearman_with_correctness={
            r["label"]: SpearmanWithCorrectness(
                spearman=r["spearman"], se=r["spearman_se"], n=r["n"]
            )
            for r in corr.iter_rows(named=True)
        },
        retrieval_not_judged=dict(retrieval_not_judged or {}),
        discrimination=discrimination,
        grading_fallbacks={
            name: grading_fallbacks(methods)
            for name, methods in (
                ("correctness", _column(correctness, "grading_method")),
                ("relevance", _column(relevance, "grading_method")),
                ("udcg", _context_methods(udcg, "p_methods")),
            )
            if methods is not None and any(m is not None for m in methods)
        },
    )


def llm_roles(params: JudgingView) -> tuple[bool, bool, bool]:
    """Whether primary 1, primary 2 and the arbitrator are LLM judges."""
    jp = params.judge
    judges = build_judges([*jp.primaries, jp.arbitrator], JudgeContext(params))
    p1, p2 = jp.primaries
    return judges[p1].uses_llm, judges[p2].uses_llm, judges[jp.arbitrator].uses_llm


def run(params: JudgingView) -> None:
    """Stage ``judge_summary`` (paths relative to the cwd)."""
    answers, qa = read_answers_and_qa()
    verdicts = read_table(catalog.path("verdicts"), "verdicts")
    correctness = read_table(catalog.path("correctness"), "correctness")
    relevance = read_table(catalog.path("relevance"), "relevance")
    udcg = read_table(catalog.path("udcg"), "udcg")
    k = params.judge.udcg.k
    span = span_metrics(answers, qa, params, k)
    per_q, theta = per_question_table(answers, verdicts, correctness, relevance, udcg, span, params)
    sys_sum = system_summary(per_q, verdicts, correctness, udcg)
    corr = metric_correlation(per_q, k)
    roles = llm_roles(params)
    write_parquet(per_q, catalog.path("per_question"), "judge_per_question")
    write_parquet(sys_sum, catalog.path("system_summary"), "system_summary")
    write_parquet(corr, catalog.path("metric_correlation"), "metric_correlation")
    systems = answers["system"].unique(maintain_order=True).to_list()
    check = dafe_check(
        verdicts, systems, controls_of(answers), params.controls.bootstrap, params.controls.seed
    )
    summary = judge_summary(
        params,
        verdicts,
        correctness,
        relevance,
        udcg,
        sys_sum,
        corr,
        theta,
        roles,
        check,
        retrieval_skips.retrieval_not_judged(answers),
    )
    write_json(summary.model_dump(mode="json"), catalog.path("judge_summary"))
    for col, f in summary.grading_fallbacks.items():
        if f.fallback_rows:
            log.warning("%s: %d of %d rows graded from floors or fallbacks %s", col,
                        f.fallback_rows, f.rows, f.methods)  # fmt: skip
    log.info("judge: step %s done", "summary")
