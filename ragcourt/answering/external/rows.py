"""Rows of table ``answers`` for an external system: one per QA question, in QA order.

An answered row: the answer (stripped), ``abstained`` by the same NO-RESPONSE rule as built-in
systems (:func:`ragcourt.answering.generation.is_abstention`), ``retrieved`` from the supplied
contexts (:func:`~ragcourt.answering.external.replies.retrieved_rows`), ``query_variants``
empty, ``latency_s`` as measured (Python / HTTP: wall time of the call, retries included) or as
reported (answers file; null when the file has none), token counts null (not known), ``model``
``external:<kind>``. An error row: ``answer`` / ``abstained`` null, ``error`` the reason,
``retrieved`` empty. An answer that is empty after stripping is an error row.

``cost_usd`` is carried on each row dict; it lands in the table once the ``answers`` schema has
that column (until then the frame keeps only the schema's columns).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import polars as pl

from ragcourt.answering.external.replies import Reply, retrieved_rows
from ragcourt.answering.generation import ANSWER_SCHEMA, is_abstention
from ragcourt.core.redact import redact_urls_in

Scrub = Callable[[str], str]


def no_scrub(text: str) -> str:
    """The identity :data:`Scrub` (systems with no secrets)."""
    return text


def answer_row(
    system: str,
    model: str,
    question_id: str,
    reply: Reply,
    latency_s: float | None,
    scrub: Scrub = no_scrub,
) -> dict[str, Any]:
    """The row of an answered question (an error row when the answer is blank)."""
    text = scrub(reply.answer).strip()
    if not text:
        return error_row(system, model, question_id, "returned an empty answer", latency_s)
    passages = [replace(p, text=scrub(p.text)) for p in reply.contexts]
    return {
        "system": system,
        "question_id": question_id,
        "answer": text,
        "abstained": is_abstention(text),
        "retrieved": retrieved_rows(system, question_id, passages),
        "query_variants": [],
        "latency_s": latency_s,
        "prompt_tokens": None,
        "completion_tokens": None,
        "model": model,
        "error": None,
        "cached": False,
        "cost_usd": reply.cost_usd,
    }


def error_row(
    system: str, model: str, question_id: str, error: str, latency_s: float | None = None
) -> dict[str, Any]:
    """The row of a question the system did not answer (``error`` says why, every URL in it
    redacted: :func:`~ragcourt.core.redact.redact_urls_in`)."""
    return {
        "system": system,
        "question_id": question_id,
        "answer": None,
        "abstained": None,
        "retrieved": [],
        "query_variants": [],
        "latency_s": latency_s,
        "prompt_tokens": None,
        "completion_tokens": None,
        "model": model,
        "error": redact_urls_in(error),
        "cached": False,
        "cost_usd": None,
    }


def rows_frame(rows: Sequence[dict[str, Any]]) -> pl.DataFrame:
    """The rows as an ``answers`` frame (the schema's columns, in its order)."""
    return pl.DataFrame(list(rows), schema=ANSWER_SCHEMA).select(list(ANSWER_SCHEMA))


def merge_previous(
    question_ids: Sequence[str], fresh: dict[str, dict[str, Any]], previous: pl.DataFrame | None
) -> list[dict[str, Any]]:
    """Rows in QA order: ``fresh`` rows, else the answered (non-error) row of ``previous``."""
    kept: dict[str, dict[str, Any]] = {}
    if previous is not None:
        ok = previous.filter(pl.col("error").is_null())
        kept = {r["question_id"]: r for r in ok.iter_rows(named=True)}
    return [fresh[q] if q in fresh else kept[q] for q in question_ids]
