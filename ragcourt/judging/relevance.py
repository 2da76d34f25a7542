"""Pointwise passage relevance (RAGElo, spec §5) and MRR@k at both thresholds.

Every retrieved passage of every answer is graded 0 (not relevant), 1 (somewhat: on topic,
does not fully answer) or 2 (very: answers the question). From prompt v2 (fenced question
and passage) the grade is read from the first answer token: ``relevance_expected`` =
sum_g P(g) * g over P("0"/"1"/"2") and ``relevance`` = the nearest grade, round(expected)
(form ``probability``); ``judge.reason`` or a model without logprobs generates a reason and
the grade (form ``generated``). v1 asks for JSON with a one-sentence reason first. Each row's
``grading_method`` says how it was graded (:mod:`ragcourt.llm.grading_methods`: e.g. a hosted
model whose top logprobs miss a grade is graded by ``label_probe``).
Passages are judged once per (question_id, chunk_id) however many systems retrieved them.

Reciprocal rank at threshold t (RR_t@k): 1/rank of the first passage in the top k with
relevance >= t, 0 when the top k holds none. A failed judgment is unknown, not "not
relevant": RR is null when an unjudged passage precedes the first relevant one (or, with
no relevant passage, sits anywhere in the top k), so it could change the value.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

import polars as pl
from pydantic import field_validator

from ragcourt.judging.llm_judges import (
    ReplyModel,
    ask_requests,
    one_token,
    prompt_requests,
    reason_field,
)
from ragcourt.llm.graded import grade as grade_items
from ragcourt.llm.grading_methods import GENERATED

if TYPE_CHECKING:
    from ragcourt.llm import ChatRequest, Gateway
    from ragcourt.llm.types import TokenDistribution

_LABELS = {"not relevant": 0, "somewhat relevant": 1, "very relevant": 2}
GRADE_LEVELS = {"0": 0.0, "1": 1.0, "2": 2.0}


class RelevanceReply(ReplyModel):
    """The annotator's JSON reply: one-sentence reason first, then the grade 0/1/2."""

    reason: str = reason_field()
    relevance: Literal[0, 1, 2]

    @field_validator("relevance", mode="before")
    @classmethod
    def _grade(cls, v: object) -> object:
        """Accept 2, 2.0, "2" and the label names ("very relevant")."""
        if isinstance(v, float) and v.is_integer():
            return int(v)
        if isinstance(v, str):
            key = v.strip().strip(".").lower()
            if key in _LABELS:
                return _LABELS[key]
            if key.isdigit():
                return int(key)
        return v


def retrieved_passages(answers: pl.DataFrame, k: int | None = None) -> pl.DataFrame:
    """Answers exploded to one row per retrieved passage: system, question_id, rank,
    chunk_id, doc_id, char_start, char_end, text (rank <= k when ``k`` is given)."""
    rows = (
        answers.select("system", "question_id", "retrieved")
        .explode("retrieved")
        .filter(pl.col("retrieved").is_not_null())
        .unnest("retrieved")
        .select(
            "system",
            "question_id",
            "rank",
            "chunk_id",
            "doc_id",
            "char_start",
            "char_end",
            "text",
        )
    )
    if k is not None:
        rows = rows.filter(pl.col("rank") <= k)
    return rows.sort("system", "question_id", "rank")


def unique_passages(passages: pl.DataFrame) -> pl.DataFrame:
    """One row per (question_id, chunk_id) with the passage text and ``n_systems``, the
    number of systems that retrieved it (so it is judged once across systems)."""
    return (
        passages.group_by("question_id", "chunk_id", maintain_order=True)
        .agg(
            pl.col("doc_id").first(),
            pl.col("text").first(),
            pl.col("system").n_unique().cast(pl.Int32).alias("n_systems"),
        )
        .sort("question_id", "chunk_id")
    )


def relevance_requests(
    questions: Sequence[str],
    passages: Sequence[str],
    model: str,
    version: str,
    temperature: float,
    seed: int | None = 0,
) -> list[ChatRequest]:
    """One grading request per (question, passage) (``seed`` = ``llm.seed``)."""
    fields = ({"question": q, "passage": p} for q, p in zip(questions, passages, strict=True))
    return prompt_requests(
        "relevance", version, model, fields, max_tokens=160, temperature=temperature,
        seed=seed, json_mode=True, tag="judge.relevance",
    )  # fmt: skip


def with_questions(passages: pl.DataFrame, questions: pl.DataFrame) -> pl.DataFrame:
    """``passages`` with their ``question`` text; a passage whose question_id is not in the QA
    set is a one-line error naming it."""
    joined = passages.join(
        questions.select("question_id", "question"), on="question_id", how="left"
    )
    missing = joined.filter(pl.col("question").is_null())
    if missing.height:
        qid = missing["question_id"][0]
        raise ValueError(f"question_id '{qid}' of a retrieved passage is not in the QA set")
    return joined


def relevance_token_requests(
    passages: pl.DataFrame,
    questions: pl.DataFrame,
    model: str,
    version: str,
    temperature: float = 0.0,
    seed: int | None = 0,
) -> list[ChatRequest]:
    """The probability-form requests :func:`grade_passage_relevance` sends (one label token
    per passage), for a caller that batches them with another judge's."""
    joined = with_questions(passages, questions)
    fields = [
        {"question": q, "passage": p}
        for q, p in zip(joined["question"].to_list(), joined["text"].to_list(), strict=True)
    ]
    return ask_requests(
        "relevance", version, model, fields, "judge.relevance", temperature, seed, 160
    )[0]


def grade_passage_relevance(
    passages: pl.DataFrame,
    questions: pl.DataFrame,
    gateway: Gateway,
    model: str,
    version: str = "v1",
    temperature: float = 0.0,
    seed: int | None = 0,
    reason: bool = False,
    dists: Sequence[TokenDistribution] | None = None,
) -> pl.DataFrame:
    """Grade each unique passage (from :func:`unique_passages`) against its question.
    Returns the ``relevance`` table: question_id, chunk_id, doc_id, n_systems,
    relevance (0/1/2 or null), relevance_expected, form, grading_method, reason, error,
    model, prompt_version. ``dists``: P(label) of :func:`relevance_token_requests` already asked
    for (probability form only)."""
    joined = with_questions(passages, questions)
    questions_, texts = joined["question"].to_list(), joined["text"].to_list()
    rel: list[int | None] = []
    expected: list[float | None] = []
    forms: list[str] = []
    methods: list[str | None] = []
    reason_: list[str] = []
    err: list[str | None] = []
    if one_token("relevance", version):
        fields = [{"question": q, "passage": p} for q, p in zip(questions_, texts, strict=True)]
        token, why = ask_requests(
            "relevance", version, model, fields, "judge.relevance", temperature, seed, 160
        )
        for g in grade_items(gateway, token, why, GRADE_LEVELS, reason, "relevance", dists):
            expected.append(g.score if g.ok else None)
            rel.append(round(g.score) if g.ok and g.score is not None else None)
            forms.append(g.form)
            methods.append(g.method or None)
            reason_.append(g.reason if g.ok else g.raw)
            err.append(g.error)
    else:
        reqs = relevance_requests(questions_, texts, model, version, temperature, seed)
        results = gateway.structured(reqs, RelevanceReply, desc="relevance") if reqs else []
        for res in results:
            ok = res.ok and res.value is not None
            grade_ = res.value.relevance if res.ok and res.value is not None else None
            rel.append(grade_)
            expected.append(None if grade_ is None else float(grade_))
            forms.append("generated")
            methods.append(GENERATED)
            reason_.append(res.value.reason if res.value is not None and ok else res.raw[:500])
            err.append(None if ok else res.error or "no parsed reply")
    return joined.select("question_id", "chunk_id", "doc_id", "n_systems").with_columns(
        pl.Series("relevance", rel, dtype=pl.Int8),
        pl.Series("relevance_expected", expected, dtype=pl.Float64),
        pl.Series("form", forms, dtype=pl.String),
        pl.Series("grading_method", methods, dtype=pl.String),
        pl.Series("reason", reason_, dtype=pl.String),
        pl.Series("error", err, dtype=pl.String),
        pl.lit(model).alias("model"),
        pl.lit(version).alias("prompt_version"),
    )


def reciprocal_rank(ranked_relevance: Sequence[int | None], threshold: int, k: int) -> float | None:
    """RR_t@k of one ranked list of grades (None = unjudged); see the module docstring."""
    for rank, grade in enumerate(ranked_relevance[:k], 1):
        if grade is None:
            return None
        if grade >= threshold:
            return 1.0 / rank
    return 0.0


def mrr_per_question(
    passages: pl.DataFrame, relevance: pl.DataFrame, k: int = 5, thresholds: Sequence[int] = (1, 2)
) -> pl.DataFrame:
    """Per (system, question_id): ``rr{t}_at{k}`` for each threshold t and ``unjudged``,
    the number of top-k passages whose relevance judgment failed."""
    graded = (
        passages.filter(pl.col("rank") <= k)
        .join(
            relevance.select("question_id", "chunk_id", "relevance"),
            on=["question_id", "chunk_id"],
            how="left",
        )
        .sort("system", "question_id", "rank")
        .group_by("system", "question_id", maintain_order=True)
        .agg(pl.col("relevance"))
    )
    cols: dict[str, list[float | None]] = {f"rr{t}_at{k}": [] for t in thresholds}
    unjudged: list[int] = []
    for grades in graded["relevance"].to_list():
        for t in thresholds:
            cols[f"rr{t}_at{k}"].append(reciprocal_rank(grades, t, k))
        unjudged.append(sum(g is None for g in grades))
    return graded.select("system", "question_id").with_columns(
        *[pl.Series(name, vals, dtype=pl.Float64) for name, vals in cols.items()],
        pl.Series("unjudged", unjudged, dtype=pl.Int32),
    )
