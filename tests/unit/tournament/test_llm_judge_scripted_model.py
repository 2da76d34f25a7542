"""The DICE LLM pairwise judge through the real gateway with a scripted model (exact replies)."""

import re
from pathlib import Path

import polars as pl
import pytest
from _llm_testing import scripted_model
from _tournament_data import answers_frame, qa_frame

from ragcourt.llm.gateway import Gateway
from ragcourt.orchestration.params import Params, load_params
from ragcourt.tournament.builders import build_pairwise_judge
from ragcourt.tournament.llm_judge import LLMPairwiseJudge
from ragcourt.tournament.pairwise import OrderKey, PairwiseContext
from ragcourt.tournament.runner import run_tournament

ROOT = Path(__file__).resolve().parents[3]
N_Q = 4
SYSTEMS = ["good", "mid", "poor"]


def _answers() -> pl.DataFrame:
    df = answers_frame(SYSTEMS, N_Q, abstain_every=0)
    j = pl.col("question_id").str.slice(1).cast(pl.Int64)
    wrong = pl.lit("It is zero.")
    return df.with_columns(
        answer=pl.when(pl.col("system") == "poor")
        .then(wrong)
        .when((pl.col("system") == "mid") & (j % 2 == 1))
        .then(pl.lit("NO-RESPONSE"))
        .otherwise(pl.col("answer")),
        abstained=(pl.col("system") == "mid") & (j % 2 == 1),
    )


def _category(answer: str) -> str:
    if answer.startswith("NO-RESPONSE"):
        return "insufficient"
    return "correct" if "says fact" in answer else "wrong"


def _sides(user: str) -> tuple[str, str]:
    fence = r"(?:<<<ANSWER [AB] [0-9a-f]{8}>>>\n)?"  # prompt v2 fences each answer
    a = re.search(rf"Answer of System A[^\n]*:\n{fence}(.*)\n", user)
    b = re.search(rf"Answer of System B[^\n]*:\n{fence}(.*)\n", user)
    assert a and b
    return _category(a.group(1)), _category(b.group(1))


RANK = {"correct": 2, "insufficient": 1, "wrong": 0}


def analysis(msgs: list[dict[str, str]]) -> str:
    if "fact number 2?" in msgs[1]["content"] and "It is zero." in msgs[1]["content"]:
        raise RuntimeError("provider down")  # every pair with 'poor' fails on q02
    ca, cb = _sides(msgs[1]["content"])
    return f"System A is {ca}. System B is {cb}."


def verdict(msgs: list[dict[str, str]]) -> dict[str, float]:
    """Decides from the analysis (assistant turn) and favours the first slot a little."""
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "user"]
    ca, cb = re.findall(r"is (\w+)\.", msgs[2]["content"])
    if RANK[ca] > RANK[cb]:
        return {"A": 0.75, "B": 0.05, "C": 0.20}
    if RANK[ca] < RANK[cb]:
        return {"A": 0.15, "B": 0.65, "C": 0.20}
    return {"A": 0.36, "B": 0.30, "C": 0.34}


@pytest.fixture
def params(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Params:
    monkeypatch.chdir(ROOT)  # prompts are read from configs/prompts
    p = load_params(ROOT / "params.yaml")
    p.llm.cache_dir = str(tmp_path / "cache")
    p.llm.metrics_dir = str(tmp_path / "metrics")
    p.llm.max_retries = 0
    p.tournament.judge = "llm"
    p.tournament.bootstrap = 20
    return p


def test_llm_judge_prompts_probabilities_and_errors_scripted_model(params: Params) -> None:
    with scripted_model("dice", analysis, next_token=verdict) as m:
        params.tournament.model = m.model
        ctx = PairwiseContext(params, answers=_answers(), qa=qa_frame(N_Q))
        judge = build_pairwise_judge("llm", ctx)
        assert isinstance(judge, LLMPairwiseJudge)
        out = run_tournament(judge, SYSTEMS, [f"q{j:02d}" for j in range(N_Q)], params.tournament)
        judge.gateway.write_metrics()

    # stage I prompt carries question, reference, both systems' evidence and answers
    first_user = next(c[1]["content"] for c in m.calls if "fact number 0?" in c[1]["content"])
    assert "Reference answer(s)" in first_user and "Fact 0 is 0." in first_user
    assert first_user.count("[1] Passage 1: fact") == 2  # evidence of both systems
    abstained = [c for c in m.calls if "declined to answer" in c[1]["content"]]
    assert abstained, "abstention is flagged in the prompt"

    pw = out.pairwise
    assert pw.height == 3 * N_Q
    gm = pw.filter((pl.col("system_a") == "good") & (pl.col("system_b") == "mid"))
    # q00: both correct -> AB (0.36, 0.30, 0.34), BA mapped back (0.30, 0.36, 0.34): soft 0.5
    row0 = gm.row(0, named=True)
    assert (row0["p_ab_a"], row0["p_ba_a"]) == pytest.approx((0.36, 0.36))
    assert (row0["p_a"], row0["p_b"], row0["p_tie"]) == pytest.approx((0.33, 0.33, 0.34))
    assert row0["scheme"] == "soft" and row0["score_a"] == pytest.approx(0.5)
    # q01: mid abstains -> good wins both orders: p_good = (0.75 + 0.65)/2 = 0.7 -> hard
    row1 = gm.row(1, named=True)
    assert row1["p_a"] == pytest.approx(0.70) and (row1["scheme"], row1["score_a"]) == ("hard", 1.0)
    assert row1["rationale_ab"] == "System A is correct. System B is insufficient."

    # failures are error rows (never ties) and counted
    errs = pw.filter(pl.col("error").is_not_null())
    assert errs.height == 2 and set(errs["question_id"]) == {"q02"}
    assert all("analysis call failed" in e for e in errs["error"])
    assert errs["score_a"].null_count() == 2
    assert out.summary.error_rows == 2
    # position bias of the script: equal answers -> A wins in both orders -> orders disagree
    equal = pw.filter(pl.col("error").is_null() & (pl.col("scheme") == "soft")).height
    valid = pw.filter(pl.col("error").is_null()).height
    assert out.summary.order_agreement == pytest.approx(1 - equal / valid)
    board = out.leaderboard.sort("bt", descending=True)
    assert board["system"].to_list() == ["good", "mid", "poor"]

    # a re-run is served by the gateway's disk cache: zero new model calls
    n_calls = len(m.calls)
    with scripted_model("dice", analysis, next_token=verdict) as m2:
        ctx2 = PairwiseContext(params, answers=_answers(), qa=qa_frame(N_Q))
        judge2 = build_pairwise_judge("llm", ctx2)
        again = run_tournament(
            judge2, SYSTEMS, [f"q{j:02d}" for j in range(N_Q)], params.tournament
        )
    assert len(m2.calls) <= 2 * 2  # only the failed q02 analyses are retried (not cached)
    assert n_calls > len(m2.calls)
    assert again.pairwise.drop("rationale_ab", "rationale_ba").equals(
        out.pairwise.drop("rationale_ab", "rationale_ba")
    )


def test_missing_answer_is_an_error_verdict_scripted_model(params: Params) -> None:
    answers = _answers().filter(~((pl.col("system") == "good") & (pl.col("question_id") == "q00")))
    with scripted_model("dice2", analysis, next_token=verdict) as m:
        params.tournament.model = m.model
        judge = LLMPairwiseJudge(
            Gateway(params.llm, stage="tournament_test"),
            m.model,
            answers,
            qa_frame(N_Q),
            params.tournament,
        )
        (v,) = judge.judge([OrderKey("good", "mid", "q00")])
    assert v.probs is None and v.error == "no answer from system 'good' to 'q00'"
    assert m.calls == []
