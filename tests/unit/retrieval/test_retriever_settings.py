"""A retriever kind with a setting of its own is one module: it registers a settings model,
``retrieval.settings.<kind>`` holds the values, ``open_retriever`` validates them first (one
line naming the key and field) and the kind reads them. Here the module is written to a temp
file and imported as a plug-in would be; real chunks Parquet in a temp project folder."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from _plugins import load_plugin

from ragcourt.core import catalog
from ragcourt.core.errors import ConfigError
from ragcourt.orchestration.params import Params
from ragcourt.retrieval.params import RetrievalParams
from ragcourt.retrieval.retrieve import RETRIEVERS, open_retriever

PLUGIN = """
from pydantic import BaseModel, Field
import polars as pl

from ragcourt.core import catalog
from ragcourt.retrieval.retrieve import RETRIEVERS, RUN_SCHEMA, RetrieverKind, retriever_settings


class InOrderSettings(BaseModel, extra="forbid"):
    skip: int = Field(default=0, ge=0, description="chunks skipped before the first hit")


class InOrder:
    name = "in_order_for_test"

    def __init__(self, chunk_ids, skip):
        self.chunk_ids, self.skip = chunk_ids, skip

    def search(self, queries, k):
        hits = self.chunk_ids[self.skip : self.skip + k]
        rows = [(q, c, r + 1, 1.0 / (r + 1), self.name)
                for q in queries["query_id"].to_list() for r, c in enumerate(hits)]
        return pl.DataFrame(rows, schema=RUN_SCHEMA, orient="row")


def _open(chunking, embedder, params):
    chunks = pl.read_parquet(catalog.path("chunks", chunking=chunking))
    settings = retriever_settings("in_order_for_test", params)
    return InOrder(chunks["chunk_id"].to_list(), settings.skip)


RETRIEVERS.register("in_order_for_test", config=InOrderSettings)(
    RetrieverKind(_open, embedder=False, bm25=False)
)
"""


def test_a_retriever_kind_with_its_own_setting_is_one_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    load_plugin(PLUGIN, "in_order_retriever_for_test", RETRIEVERS, tmp_path, monkeypatch)

    monkeypatch.chdir(tmp_path)
    chunks = catalog.path("chunks", chunking="c256")
    chunks.parent.mkdir(parents=True)
    pl.DataFrame({"chunk_id": [f"c{i}" for i in range(5)]}).write_parquet(chunks)
    queries = pl.DataFrame({"query_id": ["q1"], "question": ["anything"]})

    def params(settings: dict[str, object]) -> Params:
        return Params(retrieval=RetrievalParams(settings={"in_order_for_test": settings}))

    run = open_retriever("in_order_for_test", "c256", None, params({"skip": 2})).search(queries, 2)
    assert run["chunk_id"].to_list() == ["c2", "c3"]
    with pytest.raises(ConfigError, match=r"^retrieval\.settings\.in_order_for_test\.skip: "):
        open_retriever("in_order_for_test", "c256", None, params({"skip": -1}))
    with pytest.raises(ConfigError, match=r"^retrieval\.settings\.bm25: retriever 'bm25' takes no"):
        open_retriever(
            "bm25", "c256", None, Params(retrieval=RetrievalParams(settings={"bm25": {"k": 1}}))
        )
