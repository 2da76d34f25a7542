"""RAG-Fusion: scripted variants -> one ranking per query -> RRF order, checked by hand.

The retriever here is a lookup table (query text -> ranking) so every ranking, and hence the
fused order, can be computed by hand; the LLM is a scripted model through the real gateway.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from _llm_testing import scripted_model

from ragcourt.answering.rag_fusion import fused_search, generate_variants
from ragcourt.llm import Gateway
from ragcourt.orchestration.params import Params, load_params

ROOT = Path(__file__).resolve().parents[3]
PROMPTS = ROOT / "configs" / "prompts"


class TableRetriever:
    """Ranking by lookup: ``table[query] = [chunk ids best first]``; records every call."""

    name = "table"

    def __init__(self, table: dict[str, list[str]]) -> None:
        self.table = table
        self.calls: list[list[str]] = []

    def search(self, queries: pl.DataFrame, k: int) -> pl.DataFrame:
        self.calls.append(queries["query"].to_list())
        rows = [
            (qid, cid, rank, 1.0 / rank, self.name)
            for qid, q in queries.select("query_id", "query").iter_rows()
            for rank, cid in enumerate(self.table.get(q, [])[:k], start=1)
        ]
        return pl.DataFrame(
            rows, schema=["query_id", "chunk_id", "rank", "score", "retriever"], orient="row"
        ).with_columns(pl.col("rank").cast(pl.Int32))


@pytest.fixture
def params(tmp_path: Path) -> Params:
    p = load_params(ROOT / "params.yaml").model_copy(deep=True)
    p.llm.cache_dir = str(tmp_path / "cache")
    p.llm.metrics_dir = str(tmp_path / "metrics")
    p.llm.max_retries = 0
    return p


def _reply(messages: list[dict[str, str]]) -> str:
    user = messages[-1]["content"]
    if "Question: original question" in user:
        # numbering, a repeat of the question and a third line beyond n=2 are all handled
        return "1. variant one\n2. original question\n3. variant two\n4. variant three"
    if "Question: broken" in user:
        raise RuntimeError("provider down")
    return ""


def test_fusion_order_by_hand_scripted_model(params: Params) -> None:
    table = {
        "original question": ["c1", "c2", "c3"],
        "variant one": ["c3", "c1", "c4"],
        "variant two": ["c3", "c4", "c5"],
        "variant three": ["c9"],  # beyond n=2: must not take part
        "silent": ["c2", "c1"],
    }
    retriever = TableRetriever(table)
    queries = pl.DataFrame({"query_id": ["q1", "q2"], "query": ["original question", "silent"]})
    with scripted_model("fusion", _reply) as m:
        gw = Gateway(params.llm, stage="test")
        variants = generate_variants(gw, queries, 2, m.model, params.llm, prompts_dir=PROMPTS)
    assert variants.queries == {"q1": ["variant one", "variant two"], "q2": []}
    assert variants.errors == {}
    assert len(m.calls) == 2

    fused = fused_search(retriever, queries, variants.queries, depth=3, rrf_k=60)
    # by hand, k = 60: c3 = 1/63 + 1/61 + 1/61 = .048660; c1 = 1/61 + 1/62 = .032522;
    # c4 = 1/63 + 1/62 = .032002; c2 = 1/62 = .016129; c5 = 1/63 = .015873
    # -> depth 3 keeps c3, c1, c4
    q1 = fused.filter(pl.col("query_id") == "q1")
    assert q1["chunk_id"].to_list() == ["c3", "c1", "c4"]
    assert q1["rank"].to_list() == [1, 2, 3]
    assert q1["score"].to_list() == pytest.approx(
        [1 / 63 + 2 / 61, 1 / 61 + 1 / 62, 1 / 63 + 1 / 62]
    )
    # a question without variants keeps its own ranking (fused with nothing)
    q2 = fused.filter(pl.col("query_id") == "q2")
    assert q2["chunk_id"].to_list() == ["c2", "c1"]
    assert q2["score"].to_list() == pytest.approx([1 / 61, 1 / 62])
    assert set(fused["retriever"]) == {"table+fusion"}
    # one batch for the questions, one for all variants
    assert retriever.calls == [["original question", "silent"], ["variant one", "variant two"]]


def test_failed_variant_call_is_an_error_not_a_silent_fallback_scripted_model(
    params: Params,
) -> None:
    queries = pl.DataFrame({"query_id": ["q1", "q2"], "query": ["original question", "broken"]})
    with scripted_model("fusion_fail", _reply) as m:
        gw = Gateway(params.llm, stage="test")
        variants = generate_variants(gw, queries, 4, m.model, params.llm, prompts_dir=PROMPTS)
    assert set(variants.errors) == {"q2"}
    assert variants.errors["q2"].startswith("RAG-Fusion variant call failed:")
    assert "provider down" in variants.errors["q2"]
    assert variants.queries["q1"] == ["variant one", "variant two", "variant three"]
