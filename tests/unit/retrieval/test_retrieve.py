"""RRF fusion, span-overlap relevance, IR metrics and BM25 on hand-checked examples."""

from __future__ import annotations

import itertools
import math

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragcourt.core.errors import RagcourtError
from ragcourt.core.schemas import check, frame_schema
from ragcourt.retrieval.ir_metrics import evaluate
from ragcourt.retrieval.params import BM25Params, RelevanceRule
from ragcourt.retrieval.retrieve import BM25Retriever, rrf_fuse
from ragcourt.retrieval.span_relevance import overlap_relevant, qrels_from_spans


def run_of(query_id: str, chunk_ids: list[str], name: str = "r") -> pl.DataFrame:
    n = len(chunk_ids)
    return pl.DataFrame(
        {
            "query_id": [query_id] * n,
            "chunk_id": chunk_ids,
            "rank": list(range(1, n + 1)),
            "score": [float(n - i) for i in range(n)],
            "retriever": [name] * n,
        },
        schema=frame_schema("retrieval_run"),
    )


# ---------------------------------------------------------------------------------------------
# RRF


def test_rrf_matches_a_hand_computed_example() -> None:
    # run A: a b c ; run B: c a d   (k = 60)
    # a: 1/61 + 1/62 ; c: 1/63 + 1/61 ; b: 1/62 ; d: 1/63
    fused = rrf_fuse([run_of("q", ["a", "b", "c"]), run_of("q", ["c", "a", "d"])], k=60)
    check(fused, "retrieval_run", "<rrf>")
    assert fused["chunk_id"].to_list() == ["a", "c", "b", "d"]
    assert fused["rank"].to_list() == [1, 2, 3, 4]
    expected = [1 / 61 + 1 / 62, 1 / 61 + 1 / 63, 1 / 62, 1 / 63]
    assert fused["score"].to_list() == pytest.approx(expected, abs=1e-12)
    assert (fused["retriever"] == "hybrid").all()


def test_rrf_k_changes_scores_and_depth_cuts_per_query() -> None:
    runs = [run_of("q1", ["x", "y"]), run_of("q2", ["z", "y"]), run_of("q1", ["y", "w"])]
    fused = rrf_fuse(runs, k=1, depth=2, name="fz")
    q1 = fused.filter(pl.col("query_id") == "q1")
    assert q1["chunk_id"].to_list() == ["y", "x"]  # y: 1/3 + 1/2 beats x: 1/2
    assert q1["score"].to_list() == pytest.approx([1 / 3 + 1 / 2, 1 / 2])
    assert fused.filter(pl.col("query_id") == "q2")["chunk_id"].to_list() == ["z", "y"]
    assert fused.group_by("query_id").len()["len"].max() == 2
    assert (fused["retriever"] == "fz").all()


def test_rrf_ties_break_by_best_rank_then_chunk_id() -> None:
    # b and c: each once at rank 2 in one run and once at rank 1 in the other -> equal scores.
    # e (rank 3 in A only) vs f (rank 3 in B only): equal score and best rank -> id order.
    a = run_of("q", ["b", "c", "e"])
    b = run_of("q", ["c", "b", "f"])
    fused = rrf_fuse([b, a])
    assert fused["chunk_id"].to_list() == ["b", "c", "e", "f"]
    # a single-run chunk at rank 1 vs a chunk at ranks (2, 2)... different scores, by score
    fused2 = rrf_fuse([run_of("q", ["p", "s"]), run_of("q", ["r", "s"])], k=60)
    assert fused2["chunk_id"].to_list() == ["s", "p", "r"]
    # order of the input runs does not matter
    assert rrf_fuse([a, b]).equals(rrf_fuse([b, a]))


def test_rrf_counts_a_chunk_once_per_run_and_handles_empty_input() -> None:
    dup = pl.concat([run_of("q", ["a", "b"]), run_of("q", ["a"]).with_columns(pl.lit(5).cast(
        pl.Int32).alias("rank"))])  # fmt: skip
    fused = rrf_fuse([dup], k=60)
    assert fused.filter(pl.col("chunk_id") == "a")["score"][0] == pytest.approx(1 / 61)
    assert rrf_fuse([]).is_empty()
    check(rrf_fuse([]), "retrieval_run", "<empty>")


# ---------------------------------------------------------------------------------------------
# Span-overlap relevance

RULE = RelevanceRule(min_span_coverage=0.5, min_chunk_coverage=0.5)


@pytest.mark.parametrize(
    ("chunk", "span", "relevant"),
    [
        ((0, 1000), (100, 200), True),  # chunk holds the whole span
        ((0, 150), (100, 200), True),  # exactly half of the span (50 of 100)
        ((0, 149), (100, 200), False),  # 49 of the span, 49 of a 149-char chunk
        ((150, 260), (0, 1000), True),  # chunk wholly inside a long span (100% of the chunk)
        ((900, 1200), (0, 1000), False),  # 100 chars: 10% of the span, 33% of the chunk
        ((950, 1050), (0, 1000), True),  # half the chunk lies in the span (50 of 100)
        ((951, 1050), (0, 1000), False),  # 49 of a 99-char chunk; 49 of a 1000-char span
        ((200, 300), (100, 200), False),  # touching only (half-open intervals)
        ((0, 10), (500, 600), False),  # disjoint
    ],
)
def test_overlap_rule_boundaries(
    chunk: tuple[int, int], span: tuple[int, int], relevant: bool
) -> None:
    assert overlap_relevant(*chunk, *span, RULE) is relevant


def test_span_inside_a_chunk_is_relevant_only_if_coverage_rule_allows() -> None:
    strict = RelevanceRule(min_span_coverage=1.0, min_chunk_coverage=1.0)
    assert overlap_relevant(0, 100, 10, 20, strict)  # span fully inside the chunk
    assert not overlap_relevant(0, 100, 90, 120, strict)  # 10 of 30 span chars
    assert overlap_relevant(100, 110, 90, 120, strict)  # chunk wholly inside the span


def qa_frame(rows: list[tuple[str, str, int, int]]) -> pl.DataFrame:
    return pl.DataFrame(
        rows, schema=["question_id", "doc_id", "char_start", "char_end"], orient="row"
    ).with_columns(pl.col("char_start").cast(pl.Int64), pl.col("char_end").cast(pl.Int64))


def chunks_frame(rows: list[tuple[str, str, int, int]]) -> pl.DataFrame:
    return pl.DataFrame(
        [(cid, "c", doc, i, s, e, e - s, "t" * (e - s)) for i, (cid, doc, s, e) in enumerate(rows)],
        schema=frame_schema("chunks"),
        orient="row",
    )


def test_qrels_follow_the_rule_across_two_chunkings() -> None:
    qa = qa_frame([("q1", "d1", 100, 200), ("q2", "d2", 0, 10)])
    small = chunks_frame(
        [("s0", "d1", 0, 120), ("s1", "d1", 120, 170), ("s2", "d1", 170, 300), ("s3", "d2", 0, 50)]
    )
    big = chunks_frame([("b0", "d1", 0, 500), ("b1", "d2", 0, 500)])
    q_small = qrels_from_spans(qa, small, RULE)
    # s0: 20/100 of span, 20/120 of chunk -> no; s1: wholly inside -> yes;
    # s2: 30/100, 30/130 -> no; s3: holds the whole q2 span -> yes
    assert q_small.rows() == [("q1", "s1", 1), ("q2", "s3", 1)]
    assert qrels_from_spans(qa, big, RULE).rows() == [("q1", "b0", 1), ("q2", "b1", 1)]
    assert q_small.schema["relevance"] == pl.Int32


def test_empty_span_is_an_error_naming_the_question() -> None:
    with pytest.raises(RagcourtError, match="QA item 'q9': empty ground-truth span"):
        qrels_from_spans(qa_frame([("q9", "d", 5, 5)]), chunks_frame([("c", "d", 0, 9)]), RULE)


@settings(max_examples=200, deadline=None)
@given(
    cuts=st.lists(st.integers(1, 999), min_size=0, max_size=12, unique=True),
    a=st.integers(0, 999),
    length=st.integers(1, 400),
    span_cov=st.sampled_from([0.25, 0.5, 0.75, 1.0]),
    chunk_cov=st.sampled_from([0.25, 0.5, 0.75, 1.0]),
)
def test_vectorised_qrels_equal_the_scalar_rule_and_default_always_finds_a_chunk(
    cuts: list[int], a: int, length: int, span_cov: float, chunk_cov: float
) -> None:
    bounds = [0, *sorted(cuts), 1000]  # a contiguous cover of a 1000-char document
    chunks = chunks_frame(
        [(f"c{i:02d}", "d", s, e) for i, (s, e) in enumerate(itertools.pairwise(bounds))]
    )
    span = (a, min(a + length, 1000))
    if span[1] <= span[0]:
        return
    rule = RelevanceRule(min_span_coverage=span_cov, min_chunk_coverage=chunk_cov)
    got = set(qrels_from_spans(qa_frame([("q", "d", *span)]), chunks, rule)["chunk_id"])
    want = {
        cid
        for cid, s, e in chunks.select("chunk_id", "char_start", "char_end").iter_rows()
        if overlap_relevant(s, e, *span, rule)
    }
    assert got == want
    if span_cov <= 0.5 and chunk_cov <= 0.5:
        assert got, "with 0.5/0.5 every span over contiguous chunks has a relevant chunk"


# ---------------------------------------------------------------------------------------------
# IR metrics (ir-measures)


def qrels_of(pairs: list[tuple[str, str]]) -> pl.DataFrame:
    return pl.DataFrame(
        [(q, c, 1) for q, c in pairs],
        schema={"query_id": pl.String, "chunk_id": pl.String, "relevance": pl.Int32},
        orient="row",
    )


def test_metrics_match_hand_computed_values() -> None:
    run = pl.concat([run_of("q1", ["x", "r1", "y", "r2"]), run_of("q2", ["u", "v"])])
    qrels = qrels_of([("q1", "r1"), ("q1", "r2"), ("q2", "gone"), ("q3", "never")])
    per = evaluate(run, qrels, ks=[1, 3])
    got = {(q, m): v for q, m, v in per.iter_rows()}
    assert got[("q1", "P@1")] == 0.0
    assert got[("q1", "P@3")] == pytest.approx(1 / 3)
    assert got[("q1", "R@3")] == pytest.approx(0.5)
    assert got[("q1", "RR@3")] == pytest.approx(0.5)
    assert got[("q1", "Success@1")] == 0.0 and got[("q1", "Success@3")] == 1.0
    idcg3 = 1 + 1 / math.log2(3)
    assert got[("q1", "nDCG@3")] == pytest.approx((1 / math.log2(3)) / idcg3)
    assert all(got[("q2", m)] == 0.0 for m in ["R@3", "RR@3", "nDCG@3"])
    # q3 has relevant chunks but no run rows: scored 0 on every measure, not dropped
    assert {m for (q, m) in got if q == "q3"} == {
        f"{m}@{k}" for m in ["R", "P", "RR", "nDCG", "Success"] for k in [1, 3]
    }
    assert all(v == 0.0 for (q, _), v in got.items() if q == "q3")


def test_metrics_use_our_rank_order_not_score_ties() -> None:
    """Equal scores must not let the evaluator re-order the run (it breaks ties by id)."""
    run = run_of("q", ["a", "z"]).with_columns(pl.lit(1.0).alias("score"))
    per = evaluate(run, qrels_of([("q", "z")]), ks=[1])
    assert dict(zip(per["measure"], per["value"], strict=True))["RR@1"] == 0.0


# ---------------------------------------------------------------------------------------------
# BM25


CHUNK_TEXTS = {
    "c0": "The nation's railroads expanded westward across the plains.",
    "c1": "Taxes on imports were reduced to help farmers and the budget.",
    "c2": "Our foreign policy seeks peace with every nation.",
    "c3": "The budget deficit and the budget surplus were debated.",
}


def test_bm25_ranks_by_term_match_with_stemming_and_drops_zero_scores() -> None:
    bm = BM25Retriever(list(CHUNK_TEXTS), list(CHUNK_TEXTS.values()), BM25Params())
    q = pl.DataFrame({"query_id": ["q1", "q2", "q3"], "query": [
        "budgets", "railroad expanding", "the of and"]})  # fmt: skip
    out = bm.search(q, 10)
    check(out, "retrieval_run", "<bm25>")
    q1 = out.filter(pl.col("query_id") == "q1")
    assert q1["chunk_id"].to_list() == ["c3", "c1"]  # 'budgets' stems to 'budget'; c3 has it twice
    assert q1["rank"].to_list() == [1, 2] and (q1["score"] > 0).all()
    assert out.filter(pl.col("query_id") == "q2")["chunk_id"].to_list() == ["c0"]
    assert out.filter(pl.col("query_id") == "q3").is_empty()  # stopwords only -> no hits
    no_stem = BM25Retriever(list(CHUNK_TEXTS), list(CHUNK_TEXTS.values()), BM25Params(stemmer=None))
    assert no_stem.search(q.head(1), 10).is_empty()  # 'budgets' != 'budget' without stemming


def test_retrievers_reject_malformed_queries() -> None:
    bm = BM25Retriever(list(CHUNK_TEXTS), list(CHUNK_TEXTS.values()), BM25Params())
    with pytest.raises(RagcourtError, match="lacks column 'query'"):
        bm.search(pl.DataFrame({"query_id": ["a"], "text": ["x"]}), 3)
    with pytest.raises(RagcourtError, match="duplicate query_id 'a'"):
        bm.search(pl.DataFrame({"query_id": ["a", "a"], "query": ["x", "y"]}), 3)
