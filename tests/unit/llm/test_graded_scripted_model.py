"""llm/graded.py: probability form from next-token probabilities; generated form when the
model has no logprobs (named in the reason) or when a reason is asked for; bad labels fail."""

from __future__ import annotations

from pathlib import Path

import pytest
from _llm_testing import scripted_model

from ragcourt.llm import ChatRequest, Gateway
from ragcourt.llm.graded import YES_NO, grade
from ragcourt.llm.params import LLMParams

LEVELS = {"0": 0.0, "1": 1.0, "2": 2.0}


def _gw(tmp_path: Path) -> Gateway:
    p = LLMParams(cache=False, metrics_dir=str(tmp_path), parse_retries=0)
    return Gateway(p, stage="test_graded")


def _reqs(model: str, n: int) -> tuple[list[ChatRequest], list[ChatRequest]]:
    token = [ChatRequest.of(model, "s", f"item {i} token", max_tokens=1) for i in range(n)]
    why = [ChatRequest.of(model, "s", f"item {i} why", json_mode=True) for i in range(n)]
    return token, why


def test_probability_form_is_the_expected_level_scripted_model(tmp_path: Path) -> None:
    dist = {"0": 0.2, "1": 0.3, "2": 0.5}
    with scripted_model("g1", "unused", next_token=lambda _m: dist) as m:
        out = grade(_gw(tmp_path), *_reqs(m.model, 2), LEVELS)
    assert [g.form for g in out] == ["probability", "probability"]
    assert out[0].score == pytest.approx(0.3 + 1.0)
    assert len(m.calls) == 2
    assert all("user" in c[-1]["role"] and "token" in c[-1]["content"] for c in m.calls)


def test_no_logprobs_falls_back_to_generated_and_says_so_scripted_model(tmp_path: Path) -> None:
    with scripted_model("g2", '{"reason": "fits", "label": "yes"}') as m:
        out = grade(_gw(tmp_path), *_reqs(m.model, 1), YES_NO)
    assert out[0].form == "generated" and out[0].score == 1.0
    assert "returned no logprobs" in out[0].reason


def test_reason_asks_the_generated_form_and_rejects_unknown_labels_scripted_model(
    tmp_path: Path,
) -> None:
    def reply(msgs: list[dict[str, str]]) -> str:
        label = "2" if "item 0" in msgs[-1]["content"] else "7"
        return f'{{"reason": "r", "label": "{label}"}}'

    with scripted_model("g3", reply, next_token=lambda _m: {"0": 1.0}) as m:
        out = grade(_gw(tmp_path), *_reqs(m.model, 2), LEVELS, reason=True)
    assert [g.form for g in out] == ["generated", "generated"]
    assert out[0].score == 2.0 and out[0].label == "2"
    assert out[1].score is None and out[1].error and "not one of" in out[1].error
    assert m.calls and all("why" in c[-1]["content"] for c in m.calls)


def test_grouped_batch_keeps_each_groups_candidates_and_order_scripted_model(
    tmp_path: Path,
) -> None:
    """next_token_probs_grouped: one result list per group, in request order, each read over
    its own candidates; ``grade`` takes those distributions without asking again."""

    def dist(msgs: list[dict[str, str]]) -> dict[str, float]:
        words = msgs[-1]["content"].split()
        if words[-1] == "udcg":
            return {"NO": 0.3, "x": 0.7}
        p0 = 0.1 * (int(words[1]) + 1)
        return {"0": p0, "1": 0.2, "2": 0.8 - p0}

    with scripted_model("g4", "unused", next_token=dist) as m:
        gw = _gw(tmp_path)
        token, why = _reqs(m.model, 3)
        udcg = [ChatRequest.of(m.model, "s", f"item {i} udcg", max_tokens=1) for i in (2, 0)]
        rel, no = gw.next_token_probs_grouped([(token, list(LEVELS)), (udcg, ["NO"])])
        n_calls = len(m.calls)
        out = grade(gw, token, why, LEVELS, dists=rel)
    assert n_calls == 5 and len(m.calls) == 5  # grade asked nothing more
    assert [d.probs["0"] for d in rel] == pytest.approx([0.1, 0.2, 0.3])
    assert [d.raw["NO"] for d in no] == pytest.approx([0.3, 0.3])
    assert [g.score for g in out] == pytest.approx([1.6, 1.4, 1.2])
    with pytest.raises(ValueError, match="one per token request"):
        grade(gw, token, why, LEVELS, dists=rel[:2])
