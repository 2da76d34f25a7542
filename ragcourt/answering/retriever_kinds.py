"""Every kind a system's ``retriever`` may name (spec §3): retrievers over an index
(:data:`ragcourt.retrieval.retrieve.RETRIEVERS`: dense / bm25 / hybrid) and control retrievers
without one (:data:`CONTROL_RETRIEVERS`: oracle / random / none, registered in
:mod:`ragcourt.answering.control_retrieval`). Both are registries; a new kind is one module
registering into one of them (an entry-point plug-in from outside the package).
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from ragcourt.answering.params import AnsweringView
from ragcourt.answering.retrieval_groups import GroupRetrieval
from ragcourt.answering.retrieval_key import RetrievalKey
from ragcourt.core.registry import Registry
from ragcourt.retrieval.retrieve import RETRIEVERS

ControlRetrieval = Callable[[RetrievalKey, pl.DataFrame, AnsweringView], GroupRetrieval]
"""``control(key, qa, params)`` -> the passages of every question (no index, no model call)."""

CONTROL_RETRIEVERS: Registry[ControlRetrieval] = Registry(
    "control retriever", builtins=("ragcourt.answering.control_retrieval",)
)


def retriever_kinds() -> list[str]:
    """Every registered retriever kind, indexed and control, sorted."""
    return sorted({*RETRIEVERS.kinds(), *CONTROL_RETRIEVERS.kinds()})


def check_retriever(kind: str) -> str:
    """``kind`` when registered; else ValueError listing the registered kinds."""
    if kind in RETRIEVERS or kind in CONTROL_RETRIEVERS:
        return kind
    raise ValueError(f"unknown retriever '{kind}' (registered: {', '.join(retriever_kinds())})")


def is_control(kind: str) -> bool:
    """A control retriever (no index, no embedder, no RAG-Fusion)."""
    return kind in CONTROL_RETRIEVERS


def needs_embedder(kind: str) -> bool:
    """The retriever reads the dense index of an embedder."""
    return kind in RETRIEVERS and RETRIEVERS.get(kind, "retriever").embedder


def reads_bm25(kind: str) -> bool:
    """The retriever reads the BM25 index (its ``retrieval.bm25`` params fix the ranking)."""
    return kind in RETRIEVERS and RETRIEVERS.get(kind, "retriever").bm25
