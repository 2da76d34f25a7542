"""Ask a live external system (Python callable or HTTP endpoint) every pending question.

Pending = every QA question, except those ``previous`` (the system's partition from an earlier
run with the same freshness hashes) already answered without error: a re-run retries only the
failed questions. Every outcome becomes one ``answers`` row (:mod:`~.rows`); ``scrub`` is
applied to answers, contexts and error messages before they are written or logged.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import polars as pl

from ragcourt.answering.external.bounds import log_dropped
from ragcourt.answering.external.calls import CallPolicy, call_all, run_sync
from ragcourt.answering.external.replies import Reply
from ragcourt.answering.external.rows import (
    Scrub,
    answer_row,
    error_row,
    merge_previous,
    no_scrub,
    rows_frame,
)

log = logging.getLogger("ragcourt.answer")

Asker = Callable[[tuple[str, str]], Awaitable[Reply]]
"""``ask((question_id, question))`` -> the system's reply (raises on failure)."""


def ask_every_question(
    system: str,
    model: str,
    qa: pl.DataFrame,
    make_asker: Callable[[], Awaitable[tuple[Asker, Callable[[], Awaitable[None]]]]],
    policy: CallPolicy,
    previous: pl.DataFrame | None = None,
    scrub: Scrub = no_scrub,
) -> pl.DataFrame:
    """Rows of table ``answers`` for ``system``, in QA order.

    ``make_asker()`` runs inside the event loop and returns the per-question coroutine and a
    ``close()`` coroutine (an HTTP client, say, lives exactly as long as the batch)."""
    qids, questions = qa["question_id"].to_list(), qa["question"].to_list()
    done = set()
    if previous is not None:
        done = set(previous.filter(pl.col("error").is_null())["question_id"].to_list())
    pending = [(q, t) for q, t in zip(qids, questions, strict=True) if q not in done]

    async def batch() -> list[tuple[Reply | None, str | None, float]]:
        ask, close = await make_asker()
        try:
            outcomes = await call_all(pending, ask, policy)
        finally:
            await close()
        return [(o.result, o.error, o.seconds) for o in outcomes]

    results = run_sync(batch) if pending else []
    log_dropped(system, [reply for reply, _, _ in results])
    fresh: dict[str, dict[str, Any]] = {}
    for (qid, _), (reply, err, seconds) in zip(pending, results, strict=True):
        if reply is None:
            fresh[qid] = error_row(system, model, qid, scrub(err or "no reply"), seconds)
        else:
            fresh[qid] = answer_row(system, model, qid, reply, seconds, scrub)
    if len(pending) < len(qids):
        log.info("%s: %d questions kept from the last run", system, len(qids) - len(pending))
    errors = [r["error"] for r in fresh.values() if r["error"] is not None]
    if errors:
        n_failed, first = len(errors), errors[0]
        log.warning(
            "%s: %d of %d questions failed (first: %s)", system, n_failed, len(pending), first
        )
    return rows_frame(merge_previous(qids, fresh, previous))
