"""Stratified, seeded sampling of answer and passage items."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragcourt.calibration.sampling import (
    PASSAGE_STRATA,
    SAMPLE_SCHEMA,
    SampleParams,
    allocate,
    answer_content_sha,
    answer_item_id,
    question_strata,
    sample_items,
)


def _sample(w: Any, **kw: int | None) -> pl.DataFrame:
    return sample_items(
        w.qa, w.answers, w.verdicts, w.correctness, w.relevance, SampleParams.model_validate(kw)
    )


def test_allocate_floor_then_proportional_or_equal() -> None:
    sizes = {"split": 2, "uncertain": 10, "all_correct": 50}
    order = ("split", "uncertain", "all_correct")
    # 2 each first, then D'Hondt: the large stratum takes the rest (50/8 > 10/3)
    assert allocate(sizes, 12, order) == {"split": 2, "uncertain": 2, "all_correct": 8}
    assert allocate(sizes, 12, order, "equal") == {"split": 2, "uncertain": 5, "all_correct": 5}
    # a tiny budget reaches the contested strata first
    assert allocate(sizes, 2, order) == {"split": 1, "uncertain": 1, "all_correct": 0}
    assert allocate(sizes, 1000, ()) == sizes
    assert allocate(sizes, 0, ()) == {"all_correct": 0, "split": 0, "uncertain": 0}
    # proportional: 600 units over 100/300/600 after the floor
    big = allocate({"a": 1000, "b": 3000, "c": 6000}, 600, "abc")
    assert big == pytest.approx({"a": 60, "b": 180, "c": 360}, abs=2)


@given(
    sizes=st.dictionaries(st.sampled_from("abcde"), st.integers(0, 30), min_size=1),
    budget=st.integers(0, 100),
    scheme=st.sampled_from(["proportional", "equal"]),
    floor=st.integers(0, 3),
)
def test_allocate_total_caps_and_nesting(
    sizes: dict[str, int], budget: int, scheme: Any, floor: int
) -> None:
    out = allocate(sizes, budget, "abcde", scheme, floor)
    assert sum(out.values()) == min(budget, sum(sizes.values()))
    assert all(0 <= out[s] <= sizes[s] for s in sizes)
    bigger = allocate(sizes, budget + 1, "abcde", scheme, floor)
    assert all(bigger[s] >= out[s] for s in sizes)  # a larger budget never drops a unit


def test_question_strata_cases(frame: Callable[..., pl.DataFrame]) -> None:
    rows = []

    def add(q: str, s: str, final: bool | None, resolution: str = "agreement") -> None:
        rows.append(
            {
                "system": s,
                "question_id": q,
                "final_verdict": final,
                "resolution": resolution if final is not None else "error",
            }
        )

    add("q_split", "a", True)
    add("q_split", "b", False)
    add("q_arb", "a", True, "arbitration")
    add("q_arb", "b", True)
    add("q_corr", "a", False)  # correctness 0.9 disagrees with the verdict below
    add("q_corr", "b", False)
    add("q_ok", "a", True)
    add("q_ok", "b", True)
    add("q_bad", "a", False)
    add("q_bad", "b", None)
    add("q_none", "a", None)
    verdicts = frame("verdicts", rows)
    corr = frame(
        "correctness",
        [
            {"system": "a", "question_id": "q_corr", "correctness": 0.9},
            {"system": "a", "question_id": "q_ok", "correctness": 0.2, "error": "failed"},
        ],
    )
    got = dict(question_strata(verdicts, corr, 0.5).iter_rows())
    assert got == {
        "q_split": "split",
        "q_arb": "uncertain",
        "q_corr": "uncertain",
        "q_ok": "all_correct",  # the failed correctness row is ignored
        "q_bad": "all_incorrect",
        "q_none": "unjudged",
    }


def test_sample_is_deterministic_blocked_by_question_and_hides_the_system(world: Any) -> None:
    s1 = _sample(world, n_answer_items=30, n_passage_items=10)
    s2 = _sample(world, n_answer_items=30, n_passage_items=10)
    assert s1.equals(s2)
    assert s1.schema == pl.Schema(SAMPLE_SCHEMA)
    assert s1["position"].to_list() == list(range(s1.height))
    answers = s1.filter(pl.col("kind") == "answer")
    # 30 items over 3 systems = 10 questions, each with every system's answer
    assert answers["question_id"].n_unique() == 10
    per_q = answers.group_by("question_id").agg(pl.col("system").sort())
    assert all(v == ["alpha", "beta", "gamma"] for v in per_q["system"].to_list())
    assert all("alpha" not in i and "beta" not in i for i in s1["item_id"].to_list())
    # the display order is shuffled, not grouped by system
    first = answers["system"].to_list()[:9]
    assert len(set(first)) > 1
    passages = s1.filter(pl.col("kind") == "passage")
    assert passages.height == 10 and passages["system"].is_null().all()
    assert set(passages["stratum"]) <= {"grade_0", "grade_1", "grade_2"}


def test_sample_counts_match_the_allocation(world: Any) -> None:
    s = _sample(world, n_answer_items=24, n_passage_items=9)
    for (kind, stratum), grp in s.group_by(["kind", "stratum"]):
        unit = "question_id" if kind == "answer" else "item_id"
        assert grp[unit].n_unique() == grp["stratum_sampled"][0], stratum
        assert grp["stratum_sampled"][0] <= grp["stratum_size"][0]
    p = s.filter(pl.col("kind") == "passage")
    sizes = {k: int(v) for k, v in world.relevance.group_by("relevance").len().iter_rows()}
    want = allocate({f"grade_{k}": v for k, v in sizes.items()}, 9, PASSAGE_STRATA)
    got = dict(p.group_by("stratum").len().iter_rows())
    assert got == {k: v for k, v in want.items() if v}
    assert min(got.values()) >= 2  # every grade is represented


def test_larger_budget_contains_the_smaller_sample_and_seed_changes_it(world: Any) -> None:
    small = set(_sample(world, n_answer_items=15, n_passage_items=6)["item_id"])
    big = set(_sample(world, n_answer_items=60, n_passage_items=20)["item_id"])
    assert small < big
    other = set(_sample(world, n_answer_items=15, n_passage_items=6, seed=7)["item_id"])
    assert other != small


def test_failed_answers_and_ungraded_passages_are_not_sampled(
    world_factory: Callable[..., Any],
) -> None:
    w = world_factory(error_every=2)
    rel = w.relevance.with_columns(
        pl.when(pl.col("chunk_id").str.ends_with("-c2"))
        .then(None)
        .otherwise(pl.col("relevance"))
        .alias("relevance")
    )
    s = sample_items(
        w.qa,
        w.answers,
        w.verdicts,
        w.correctness,
        rel,
        SampleParams(n_answer_items=None, n_passage_items=None),
    )
    alpha_q = set(s.filter(pl.col("system") == "alpha")["question_id"])
    assert alpha_q and all(int(q[1:]) % 2 == 1 for q in alpha_q)  # every 2nd alpha answer failed
    assert s.filter(pl.col("kind") == "answer").height == 40 + 40 + 20
    passages = s.filter(pl.col("kind") == "passage")
    assert passages.height == 40 and passages["chunk_id"].str.ends_with("-c1").all()
    assert (
        sample_items(w.qa, w.answers, w.verdicts, w.correctness, None)
        .filter(pl.col("kind") == "passage")
        .is_empty()
    )


def test_ids_and_content_digests() -> None:
    assert answer_item_id("a", "q1") == answer_item_id("a", "q1") != answer_item_id("b", "q1")
    assert answer_content_sha("q", ["r"], "x") != answer_content_sha("q", ["r"], "y")
    assert answer_content_sha("q", ["r", "s"], "x") != answer_content_sha("q", ["rs"], "x")


@pytest.mark.parametrize("n", [1, 2])
def test_tiny_budget_still_gives_one_whole_question(world: Any, n: int) -> None:
    s = _sample(world, n_answer_items=n, n_passage_items=0)
    assert s.height == 3 and s["question_id"].n_unique() == 1
