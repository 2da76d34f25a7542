"""correctness_mode 'expected' through the real gateway with a scripted model (exact
first-token top_logprobs): the score is sum_i P(digit i) * level_i (digits missing from the
top logprobs: one yes/no probe per digit), a model without logprobs gives the generated
digit, and the digit prompt states every rubric level."""

from __future__ import annotations

from pathlib import Path

import pytest
from _llm_testing import scripted_model

from ragcourt.judging.correctness import RUBRIC_LEVELS, expected_score, grade_correctness_expected
from ragcourt.judging.llm_judges import render
from ragcourt.judging.vocabulary import AnswerItem
from ragcourt.llm import Gateway
from ragcourt.orchestration.params import Params, load_params

ROOT = Path(__file__).resolve().parents[3]
DISTS = {
    "right": {"4": 0.5, "3": 0.2, "2": 0.1, "1": 0.1, "0": 0.1},
    "wrong": {"0": 0.4, "1": 0.4, "2": 0.1, "3": 0.05, "4": 0.05},
    # digits 0-2 unlisted: each digit is probed (PROBE_YES: P(yes) of "is it <digit>?")
    "partial": {"4": 0.6, "3": 0.4},
}
PROBE_YES = {"0": 0.1, "1": 0.1, "2": 0.2, "3": 0.6, "4": 0.8}


@pytest.fixture
def params(tmp_path: Path) -> Params:
    p = load_params(ROOT / "params.yaml").model_copy(deep=True)
    p.llm.cache_dir = str(tmp_path / "cache")
    p.llm.max_retries = 0
    return p


def next_token(messages: list[dict[str, str]]) -> dict[str, float]:
    asked = messages[1]["content"].split('Would your answer be "')
    if len(asked) > 1:
        p = PROBE_YES[asked[1][0]]
        return {"yes": p, "no": 1 - p}
    answer = messages[1]["content"].split("Student answer:")[1].split("\n\n")[0].strip()
    return DISTS[answer]


def test_expected_score_is_probability_weighted_rubric_level() -> None:
    # 0.6 * 1.0 + 0.3 * 0.7 + 0.1 * 0.5 = 0.86; unnormalised mass is renormalised
    assert expected_score({"4": 0.6, "3": 0.3, "2": 0.1}) == pytest.approx(0.86)
    assert expected_score({"0": 0.2, "1": 0.2}) == pytest.approx(0.15)
    assert expected_score({str(i): 1.0 for i in range(5)}) == pytest.approx(sum(RUBRIC_LEVELS) / 5)
    with pytest.raises(ValueError):
        expected_score({"x": 1.0})


def test_expected_correctness_reads_first_token_distribution_scripted_model(
    params: Params,
) -> None:
    items = [AnswerItem("Q?", a, ("ref",)) for a in ("right", "wrong", "partial")]
    with scripted_model("digits", "4", next_token=next_token) as m:
        gw = Gateway(params.llm, "test_judging")
        out = grade_correctness_expected(items, gw, m.model)
    assert [r.error for r in out] == [None, None, None]
    assert out[0].score == pytest.approx(0.72, abs=1e-3)  # .5*1 + .2*.7 + .1*.5 + .1*.3
    assert out[1].score == pytest.approx(0.255, abs=1e-3)  # .4*.3 + .1*.5 + .05*.7 + .05
    assert "4:0.50" in out[0].rationale and "fallback" not in out[0].rationale
    # (0.1*0 + 0.1*0.3 + 0.2*0.5 + 0.6*0.7 + 0.8*1) / 1.8, not the floors' 1.2 / 2.2
    assert out[2].score == pytest.approx(1.35 / 1.8, abs=1e-3)
    assert "(label_probe)" in out[2].rationale and "fallback" not in out[2].rationale
    assert [r.method for r in out] == ["top_logprobs", "top_logprobs", "label_probe"]
    assert len(m.calls) == 3 + 5


def test_expected_correctness_without_logprobs_is_the_generated_digit_scripted_model(
    params: Params,
) -> None:
    items = [AnswerItem("Q?", "right", ("ref",))]
    with scripted_model("nologprobs", "4") as m:  # no next_token: replies carry no logprobs
        out = grade_correctness_expected(items, Gateway(params.llm, "test_judging"), m.model)
    assert out[0].score == 1.0 and out[0].error is None and out[0].method == "generated_label"
    with scripted_model("nolabel", "great") as m:  # ... and a reply that is no digit
        out = grade_correctness_expected(items, Gateway(params.llm, "test_judging"), m.model)
    assert out[0].score is None and out[0].error and "none of the labels" in out[0].error


def test_digit_prompt_names_every_level() -> None:
    text = render("correctness_digit_system", "v1")
    for digit in "01234":
        assert f"{digit} = " in text
