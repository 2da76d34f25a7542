"""What the answer stage needs from a retriever and from the LLM gateway (structural types,
so tests pass spies and scripted gateways)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

import polars as pl

from ragcourt.llm.types import ChatRequest, ChatResult

if TYPE_CHECKING:
    from ragcourt.answering.params import AnsweringView


class Retriever(Protocol):
    """Ranks queries (``query_id``, ``query``) to depth ``k``: a ``retrieval_run`` frame."""

    name: str

    def search(self, queries: pl.DataFrame, k: int) -> pl.DataFrame: ...


RetrieverFactory = Callable[[str, str, "str | None", "AnsweringView"], Retriever]
"""``factory(retriever kind, chunking, embedder or None, params)`` -> an open retriever."""


class Chatter(Protocol):
    """The gateway's batch chat call: one result per request, in order."""

    def chat(self, reqs: list[ChatRequest], desc: str = "") -> list[ChatResult]: ...
