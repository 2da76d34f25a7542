"""Where an answer row's passages came from, for the stages that score retrieval.

A built-in system's ``retrieved`` list is what ragcourt's own retriever ranked, so an empty list
means the retriever found nothing (retrieval metrics are legitimately 0 / "no retrieved
passages"). An external system (``kind: answers_file | python | http``) reports its passages
itself: rows carry ``model = "external:<kind>"`` (:func:`external_model`) and its contexts as
``retrieved`` with synthetic chunk ids ``ext:<system>:<question_id>:<i>``
(:func:`external_chunk_id`, rank ``i + 1``). An external row with an empty ``retrieved`` list
supplied **no contexts**: its retrieval metrics must be null, labelled
:data:`NO_CONTEXTS_SUPPLIED`, never 0. Judging and the report use the expressions below on the
``answers`` table instead of re-deriving the convention.

Shared vocabulary of the answer, judging and report stages (only polars is imported).
"""

from __future__ import annotations

import polars as pl

EXTERNAL_MODEL_PREFIX = "external:"
EXTERNAL_CHUNK_PREFIX = "ext:"
NO_CONTEXTS_SUPPLIED = "no contexts supplied"
NO_RETRIEVED_PASSAGES = "no retrieved passages"


def external_model(kind: str) -> str:
    """The ``model`` column of an external system's rows, e.g. ``external:http``."""
    return f"{EXTERNAL_MODEL_PREFIX}{kind}"


def external_chunk_id(system: str, question_id: str, index: int) -> str:
    """Synthetic chunk id of the ``index``-th (0-based) context an external system supplied."""
    return f"{EXTERNAL_CHUNK_PREFIX}{system}:{question_id}:{index}"


def is_external() -> pl.Expr:
    """True for rows of an external system (``model`` starts with ``external:``)."""
    return pl.col("model").fill_null("").str.starts_with(EXTERNAL_MODEL_PREFIX)


def has_contexts() -> pl.Expr:
    """True when the row has at least one passage in ``retrieved`` (null list -> False)."""
    return pl.col("retrieved").list.len().fill_null(0) > 0


def contexts_missing() -> pl.Expr:
    """True for external rows that supplied no contexts: retrieval metrics are null there."""
    return is_external() & ~has_contexts()


def retrieval_gap() -> pl.Expr:
    """Why a row has no passages to score: :data:`NO_CONTEXTS_SUPPLIED` (external system),
    :data:`NO_RETRIEVED_PASSAGES` (built-in retriever found nothing), null when it has some."""
    return (
        pl.when(has_contexts())
        .then(pl.lit(None, dtype=pl.String))
        .when(is_external())
        .then(pl.lit(NO_CONTEXTS_SUPPLIED))
        .otherwise(pl.lit(NO_RETRIEVED_PASSAGES))
    )


def systems_without_contexts(answers: pl.DataFrame) -> list[str]:
    """External systems none of whose rows supplied a context (config order): the report shows
    their retrieval columns as :data:`NO_CONTEXTS_SUPPLIED`."""
    if answers.is_empty():
        return []
    per = answers.group_by("system", maintain_order=True).agg(
        is_external().all().alias("external"), has_contexts().any().alias("any_contexts")
    )
    return per.filter(pl.col("external") & ~pl.col("any_contexts"))["system"].to_list()
