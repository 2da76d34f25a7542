"""The retrieval evaluation grid reads retriever kinds from the retriever registry."""

from __future__ import annotations

import pytest

from ragcourt.core.errors import ConfigError
from ragcourt.orchestration.params import Params
from ragcourt.retrieval.evaluation import evaluation_grid


def test_grid_runs_embedder_free_retrievers_once_per_chunking() -> None:
    p = Params.model_validate({"retrieval": {"retrievers": ["bm25", "dense"]}})
    grid = list(evaluation_grid(p))
    assert [g for g in grid if g[2] == "bm25"] == [(c, None, "bm25") for c in p.chunkings]
    assert [g for g in grid if g[2] == "dense"] == [
        (c, e, "dense") for c in p.chunkings for e in p.embedders
    ]


def test_unknown_retriever_is_one_line_naming_the_key_and_the_kinds() -> None:
    p = Params.model_validate({"retrieval": {"retrievers": ["dense", "magic"]}})
    with pytest.raises(ConfigError) as err:
        list(evaluation_grid(p))
    msg = str(err.value)
    assert "\n" not in msg and "retrieval.retrievers[1]" in msg and "'magic'" in msg
    assert "bm25" in msg and "dense" in msg and "hybrid" in msg
