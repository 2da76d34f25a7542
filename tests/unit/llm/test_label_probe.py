"""llm/label_probe.py and llm/grading_methods.py: the yes/no probe per label, the greedy
label, and which grading methods count as fallbacks."""

from __future__ import annotations

import math

import pytest

from ragcourt.llm import grading_methods, label_probe
from ragcourt.llm.types import ChatRequest, ChatResult, PositionLogprobs, TokenLogprob


def _pos(pairs: list[tuple[str, float]]) -> PositionLogprobs:
    tops = [TokenLogprob(token=t, logprob=math.log(p)) for t, p in pairs]
    return PositionLogprobs(token=tops[0].token, logprob=tops[0].logprob, top_logprobs=tops)


def _probe(pairs: list[tuple[str, float]]) -> ChatResult:
    return ChatResult(ok=True, model="m", text=pairs[0][0], logprobs=[_pos(pairs)])


def test_probe_request_appends_the_question_to_the_last_user_message() -> None:
    req = ChatRequest.of("openai/x", "sys", "grade it", max_tokens=1, top_logprobs=20)
    p = label_probe.probe_request(req, "2")
    assert p.messages[0] == ("system", "sys")
    assert p.messages[1] == (
        "user",
        'grade it\n\nWould your answer be "2"? Reply with one word: yes or no.',
    )
    assert p.max_tokens == 1 and p.top_logprobs == 20 and p.temperature == 0.0
    after_assistant = req.model_copy(update={"messages": (*req.messages, ("assistant", "ok"))})
    assert label_probe.probe_request(after_assistant, "A").messages[-1][0] == "user"


def test_yes_probability_sums_spellings_and_bounds_a_missing_answer() -> None:
    both = label_probe.yes_probability(
        _pos([(" Yes", 0.3), ("yes", 0.1), ("No.", 0.2), ("x", 0.4)])
    )
    assert both is not None and both[0] == pytest.approx(0.4 / 0.6) and both[1] is False
    only_yes = label_probe.yes_probability(_pos([("Yes", 0.6), ("x", 0.3), ("z", 0.1)]))
    assert only_yes is not None and only_yes[0] == pytest.approx(0.6 / 0.7) and only_yes[1]
    assert label_probe.yes_probability(_pos([("x", 0.9), ("z", 0.1)])) is None
    assert label_probe.yes_probability(None) is None


def test_from_probes_normalises_p_yes_over_labels_and_names_bounded_ones() -> None:
    probes = [
        _probe([("no", 0.8), ("yes", 0.2)]),
        _probe([("yes", 0.5), ("no", 0.5)]),
        _probe([("yes", 0.9), ("x", 0.1)]),  # "no" unlisted: floor 0.1
    ]
    d = label_probe.from_probes(["0", "1", "2"], probes, "m", False)
    assert d.ok and d.method == "label_probe"
    assert d.raw == pytest.approx({"0": 0.2, "1": 0.5, "2": 0.9})
    assert d.probs["2"] == pytest.approx(0.9 / 1.6) and d.fallback == ["2"]
    assert grading_methods.of_distribution(d) == "label_probe+floor"
    bad = label_probe.from_probes(["0", "1"], [probes[0], _probe([("x", 1.0)])], "m", False)
    assert not bad.ok and bad.error is not None and "neither yes nor no" in bad.error
    failed = ChatResult(ok=False, model="m", error="boom")
    err = label_probe.from_probes(["0"], [failed], "m", False)
    assert not err.ok and "boom" in (err.error or "")


def test_from_generated_is_a_hard_distribution() -> None:
    d = label_probe.from_generated(["0", "1", "2"], " 2", "m", False, no_logprobs=True)
    assert d.ok and d.probs == {"0": 0.0, "1": 0.0, "2": 1.0} and d.no_logprobs
    assert d.method == "generated_label" and grading_methods.is_fallback("generated_label")
    single = label_probe.from_generated(["NO-RESPONSE"], "The", "m", False, no_logprobs=False)
    assert single.ok and single.raw == {"NO-RESPONSE": 0.0}
    yes = label_probe.from_generated(["NO-RESPONSE"], "NO", "m", False, no_logprobs=False)
    assert yes.raw == {"NO-RESPONSE": 1.0}
    none = label_probe.from_generated(["0", "1"], "maybe", "m", False, no_logprobs=True)
    assert not none.ok and none.no_logprobs and "none of the labels" in (none.error or "")


def test_which_methods_are_fallbacks() -> None:
    assert [grading_methods.is_fallback(m) for m in ("logits", "top_logprobs", "generated")] == [
        False,
        False,
        False,
    ]
    flagged = ("top_logprobs+floor", "label_probe", "generated_label", "generated_no_logprobs")
    assert all(grading_methods.is_fallback(m) for m in flagged)
    assert not grading_methods.is_fallback(None)
    assert grading_methods.fallback_rows(["logits", None, "label_probe", "top_logprobs+floor"]) == 2
