"""Size bounds on an external system's reply (params ``limits``; docs: troubleshooting,
Limits): an answer longer than ``answer_max_chars`` or a passage longer than
``context_max_chars`` makes the reply a :class:`~.replies.ReplyError` (the question becomes an
error row saying which limit); identical passages (same text, doc id and offsets) are kept
once, then at most ``contexts_max`` passages are kept, in order, the number dropped recorded
on the reply (:attr:`~.replies.Reply.dropped_contexts`) and logged per system."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import replace

from ragcourt.answering.external.replies import Passage, Reply, ReplyError
from ragcourt.core.params import LimitsParams

log = logging.getLogger("ragcourt.answer")


def bound_reply(reply: Reply, limits: LimitsParams) -> Reply:
    """``reply`` within ``limits`` (rules in the module docstring)."""
    if len(reply.answer) > limits.answer_max_chars:
        raise ReplyError(
            f"answer is {len(reply.answer):,} characters, over limits.answer_max_chars "
            f"({limits.answer_max_chars:,})"
        )
    seen: set[Passage] = set()
    unique = []
    for p in reply.contexts:
        if p not in seen:
            seen.add(p)
            unique.append(p)
    kept = unique[: limits.contexts_max]
    for i, p in enumerate(kept):
        if len(p.text) > limits.context_max_chars:
            raise ReplyError(
                f"contexts[{i}] is {len(p.text):,} characters, over limits.context_max_chars "
                f"({limits.context_max_chars:,})"
            )
    dropped = len(reply.contexts) - len(kept)
    if not dropped:
        return reply
    return replace(reply, contexts=tuple(kept), dropped_contexts=dropped)


def log_dropped(system: str, replies: Iterable[Reply | None]) -> None:
    """One warning when passages of ``system`` were dropped (duplicates, over contexts_max)."""
    counts = [r.dropped_contexts for r in replies if r is not None and r.dropped_contexts]
    if counts:
        log.warning(
            "%s: %d passages dropped from %d answers (duplicates, or over limits.contexts_max)",
            system,
            sum(counts),
            len(counts),
        )
