"""Pairwise judges (correctness_margin, registry) and the judgement memo."""

from collections.abc import Sequence
from pathlib import Path

import polars as pl
import pytest

from ragcourt.core.errors import ConfigError, SchemaError
from ragcourt.orchestration.params import load_params
from ragcourt.tournament.builders import build_pairwise_judge
from ragcourt.tournament.correctness_margin import CorrectnessMarginJudge, ordered_logit_probs
from ragcourt.tournament.memo import JudgementMemo
from ragcourt.tournament.pairwise import PAIRWISE_JUDGES, OrderKey, OrderVerdict, PairwiseContext
from ragcourt.tournament.scoring import Probs

PARAMS = load_params(Path(__file__).resolve().parents[3] / "params.yaml")
CORR = pl.DataFrame(
    {
        "system": ["x", "x", "x", "y", "y", "y"],
        "question_id": ["q1", "q2", "q3", "q1", "q2", "q3"],
        "correctness": [1.0, 0.5, 0.7, 0.3, 0.5, None],
        "error": [None, None, None, None, None, "judge timeout"],
    }
)


def test_ordered_logit_calibration_points() -> None:
    # d = 0: P(A) = P(B) = σ(-1) = 0.2689, tie 0.4621 -> hard tie under the 0.1 margin
    p = ordered_logit_probs(0.0, 0.1, 0.1)
    assert (p.a, p.b, p.tie) == pytest.approx((0.26894, 0.26894, 0.46212), abs=1e-5)
    # one rubric step (0.3): P(A) = σ(2) = 0.8808
    assert ordered_logit_probs(0.3, 0.1, 0.1).a == pytest.approx(0.880797, abs=1e-6)


def test_correctness_margin_verdicts_and_errors() -> None:
    judge = CorrectnessMarginJudge(CORR)
    v = judge.judge([OrderKey("x", "y", "q1"), OrderKey("y", "x", "q1"), OrderKey("x", "y", "q3")])
    assert v[0].probs is not None and v[0].probs.a > 0.85  # 1.0 vs 0.3
    assert v[1].probs == v[0].probs.swapped()  # symmetric: no position bias
    assert v[2].probs is None and "judge timeout" in (v[2].error or "")
    missing = judge.judge([OrderKey("x", "z", "q1")])[0]
    assert "no correctness score for system 'z'" in (missing.error or "")


def test_correctness_table_problems_are_one_line_errors() -> None:
    with pytest.raises(SchemaError, match="missing column"):
        CorrectnessMarginJudge(CORR.drop("error"))
    with pytest.raises(SchemaError, match="duplicate row for system 'x'"):
        CorrectnessMarginJudge(pl.concat([CORR, CORR.head(1)]))
    bad = CorrectnessMarginJudge(CORR.with_columns(pl.lit(1.5).alias("correctness")))
    assert "outside [0, 1]" in (bad.judge([OrderKey("x", "y", "q1")])[0].error or "")


def test_registry_names_unknown_judges() -> None:
    ctx = PairwiseContext(PARAMS, pl.DataFrame(), pl.DataFrame(), CORR)
    assert build_pairwise_judge("correctness_margin", ctx).name == "correctness_margin"
    assert PAIRWISE_JUDGES.kinds() == ["correctness_margin", "llm"]
    with pytest.raises(
        ConfigError,
        match=r"^tournament\.judge: unknown pairwise judge 'nope' "
        r"\(registered: correctness_margin, llm\)$",
    ):
        build_pairwise_judge("nope", ctx)
    with pytest.raises(ConfigError, match="needs the correctness table"):
        build_pairwise_judge("correctness_margin", PairwiseContext(PARAMS))
    with pytest.raises(ConfigError, match="'llm' needs the answers and QA tables"):
        build_pairwise_judge("llm", PairwiseContext(PARAMS))


def test_correctness_table_is_read_only_by_the_judge_that_needs_it() -> None:
    reads: list[str] = []

    def read() -> pl.DataFrame:
        reads.append("correctness")
        return CORR

    ctx = PairwiseContext(PARAMS, pl.DataFrame(), pl.DataFrame(), read_correctness=read)
    assert reads == []  # nothing read while the stage builds the context
    judge = build_pairwise_judge("correctness_margin", ctx)
    build_pairwise_judge("correctness_margin", ctx)
    assert reads == ["correctness"]  # read once, on first use
    assert judge.judge([OrderKey("x", "y", "q1")])[0].probs is not None


def test_a_user_pairwise_judge_plugs_in_through_the_registry() -> None:
    @PAIRWISE_JUDGES.register("test_always_tie")
    def _always_tie(ctx: PairwiseContext) -> CountingJudge:
        return CountingJudge()

    judge = build_pairwise_judge("test_always_tie", PairwiseContext(PARAMS))
    assert isinstance(judge, CountingJudge)
    with pytest.raises(ConfigError, match="'test_always_tie' is already registered"):
        PAIRWISE_JUDGES.register("test_always_tie")(lambda ctx: CountingJudge())


class CountingJudge:
    """Prefers the first-shown answer strongly (position bias) unless it is 'bad'."""

    name = "counting"

    def __init__(self) -> None:
        self.calls: list[OrderKey] = []

    def judge(self, keys: Sequence[OrderKey]) -> list[OrderVerdict]:
        self.calls.extend(keys)
        out = []
        for k in keys:
            if "bad" in (k.first, k.second):
                out.append(OrderVerdict(None, error="model failed"))
            elif k.first == "x":
                out.append(OrderVerdict(Probs(0.9, 0.05, 0.05), "x first"))
            else:
                out.append(OrderVerdict(Probs(0.5, 0.3, 0.2), "y first"))
        return out


def test_memo_judges_each_order_once_and_combines() -> None:
    judge = CountingJudge()
    memo = JudgementMemo(judge, ["q1", "q2"], margin=0.1)
    play = memo.play_as("swiss")
    (m,) = play([("x", "y")])
    rr = memo.play_as("round_robin")
    (m2,) = rr([("y", "x")])  # same pair, other side first: served from the memo
    assert len(judge.calls) == 4 == memo.executed  # 2 questions x 2 orders
    assert len(set(judge.calls)) == 4
    # combined: p_x = (0.9 + 0.3)/2 = 0.6, p_y = (0.05 + 0.5)/2 = 0.275 -> hard win for x
    assert (m.s_a, m.s_b, m.n, m.n_errors) == (2.0, 0.0, 2, 0)
    assert (m2.s_a, m2.s_b) == (0.0, 2.0)
    frame = memo.pairwise_frame("counting")
    assert frame.height == 2
    row = frame.row(0, named=True)
    assert (row["system_a"], row["system_b"], row["scheme"]) == ("x", "y", "hard")
    assert (row["p_ab_a"], row["p_ba_a"]) == (0.9, 0.5)
    assert row["p_a"] == pytest.approx(0.6) and row["in_swiss"] and row["in_round_robin"]


def test_memo_errors_are_rows_not_ties() -> None:
    memo = JudgementMemo(CountingJudge(), ["q1", "q2", "q3"])
    (m,) = memo.play_as("swiss")([("x", "bad")])
    assert (m.n, m.n_errors, m.s_a, m.s_b) == (0, 3, 0.0, 0.0)
    frame = memo.pairwise_frame("counting")
    assert frame["error"].null_count() == 0
    assert frame["score_a"].null_count() == 3 and frame["scheme"].null_count() == 3
    assert frame["error"][0].startswith("order AB: model failed")
    assert frame["in_round_robin"].to_list() == [False] * 3
