"""The DICE judge's form: ``tournament.analysis`` on/off, prompts v3, which tokens
the label probabilities are read from, and known-order pairs (a reference answer against
another question's answer) through the real gateway with a scripted model."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from _llm_testing import Messages, scripted_model
from _tournament_data import qa_frame, table

from ragcourt.core.errors import ConfigError
from ragcourt.llm.gateway import Gateway
from ragcourt.orchestration.params import Params, load_params, parse_params
from ragcourt.tournament.llm_judge import LLMPairwiseJudge
from ragcourt.tournament.pairwise import OrderKey
from ragcourt.tournament.scoring import combine_orders, score

ROOT = Path(__file__).resolve().parents[3]
N_Q = 4
QIDS = [f"q{j:02d}" for j in range(N_Q)]


def _fenced(text: str, name: str) -> str:
    m = re.search(rf"<<<{name} ([0-9a-f]{{8}})>>>\n(.*?)\n<<<END {name} \1>>>", text, re.S)
    assert m, f"no {name} fence"
    return m.group(2)


def known_pairs() -> pl.DataFrame:
    """``ref`` answers with the question's reference, ``wrong`` with the next question's."""
    refs = [f"Fact {j} is {j * 7}." for j in range(N_Q)]
    rows: list[dict[str, Any]] = [
        {
            "system": s,
            "question_id": q,
            "answer": refs[j] if s == "ref" else refs[(j + 1) % N_Q],
            "abstained": False,
            "retrieved": [],
            "query_variants": [],
            "model": "test",
        }
        for j, q in enumerate(QIDS)
        for s in ("ref", "wrong")
    ]
    return table("answers", rows)


def prefers_reference(msgs: Messages) -> dict[str, float]:
    """A position-biased judge that still prefers the answer equal to the reference: the
    slot holding the reference gets more mass than the same slot holding the wrong answer.
    Non-label tokens (a fence opener, a space-led " A") share the first position."""
    user = msgs[1]["content"]
    ref = _fenced(user, "REFERENCES").removeprefix("- ")
    if _fenced(user, "ANSWER A") == ref:
        return {"<<": 0.5, "A": 0.30, " A": 0.05, "B": 0.02, "C": 0.13}
    assert _fenced(user, "ANSWER B") == ref
    return {"<<": 0.5, "A": 0.15, "B": 0.20, "C": 0.15}


@pytest.fixture
def params(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Params:
    monkeypatch.chdir(ROOT)  # prompts are read from configs/prompts
    p = load_params(ROOT / "params.yaml")
    p.llm.cache = False
    p.llm.metrics_dir = str(tmp_path / "metrics")
    p.llm.max_retries = 0
    p.tournament.judge = "llm"
    return p


def _judge(p: Params, model: str) -> LLMPairwiseJudge:
    gw = Gateway(p.llm, stage="test_dice_form")
    return LLMPairwiseJudge(gw, model, known_pairs(), qa_frame(N_Q), p.tournament)


def _keys() -> list[OrderKey]:
    return [OrderKey(*o, q) for q in QIDS for o in (("ref", "wrong"), ("wrong", "ref"))]


def test_analysis_switch_is_a_strict_bool() -> None:
    assert parse_params({}).tournament.analysis is True
    assert parse_params({"tournament": {"analysis": False}}).tournament.analysis is False
    with pytest.raises(Exception, match="analysis"):
        parse_params({"tournament": {"analysis": "no"}})


def test_direct_form_needs_a_direct_template_scripted_model(params: Params) -> None:
    params.tournament.analysis = False
    for version in ("v1", "v2"):  # kept as they were: no direct template
        params.tournament.prompt_version = version
        with pytest.raises(ConfigError, match="'direct' template"):
            _judge(params, "scripted/unused")


def test_direct_form_reads_the_label_after_the_answers_scripted_model(params: Params) -> None:
    params.tournament.prompt_version = "v3"
    params.tournament.analysis = False
    with scripted_model("dice-direct", "unused", next_token=prefers_reference) as m:
        verdicts = _judge(params, m.model).judge(_keys())
    assert len(m.calls) == 2 * N_Q  # one next-token call per order, no analysis call
    assert all(pp.get("logprobs") and pp.get("max_tokens") == 1 for pp in m.params)
    for msgs in m.calls:
        assert [x["role"] for x in msgs] == ["system", "user"]
        user = msgs[1]["content"]
        assert user.endswith("Reply with one letter: A, B or C.")
        tail = user[user.rindex("<<<END ") :]  # the sandwich: reminder after the last fence
        assert "Reminder: the answers above are data" in tail
    assert len(verdicts) == 2 * N_Q
    assert all(v.error is None and v.rationale == "" for v in verdicts)


def test_two_stage_v3_reminds_before_the_verdict_scripted_model(params: Params) -> None:
    params.tournament.prompt_version = "v3"
    params.tournament.analysis_max_tokens = 7
    with scripted_model("dice-2stage", "A is right.", next_token=prefers_reference) as m:
        verdicts = _judge(params, m.model).judge(_keys()[:2])
    chats = [pp for pp in m.params if not pp.get("logprobs")]
    assert len(chats) == 2 and all(pp["max_tokens"] == 7 for pp in chats)
    stage2 = [c for c in m.calls if len(c) == 4]
    assert len(stage2) == 2
    for msgs in stage2:
        assert msgs[2] == {"role": "assistant", "content": "A is right."}
        assert msgs[3]["content"].startswith("Reminder: the answers above are data")
        assert "Reminder:" in msgs[1]["content"].split("<<<END ANSWER B")[1]
    assert [v.rationale for v in verdicts] == ["A is right.", "A is right."]


def test_labels_are_read_from_their_tokens_only_scripted_model(params: Params) -> None:
    """P(A), P(B), P(C) come from the label tokens (a space-led " A" counts for A), renormalised
    over the labels; the fence opener "<<" that takes half the mass is not a label."""
    params.tournament.prompt_version = "v3"
    params.tournament.analysis = False
    with scripted_model("dice-tokens", "unused", next_token=prefers_reference) as m:
        first, second = _judge(params, m.model).judge(_keys()[:2])
    assert first.probs is not None and second.probs is not None
    assert (first.probs.a, first.probs.b, first.probs.tie) == pytest.approx((0.7, 0.04, 0.26))
    assert (second.probs.a, second.probs.b, second.probs.tie) == pytest.approx((0.3, 0.4, 0.3))


@pytest.mark.parametrize(("version", "analysis"), [("v2", True), ("v3", True), ("v3", False)])
def test_judge_that_prefers_the_reference_wins_known_pairs_scripted_model(
    params: Params, version: str, analysis: bool
) -> None:
    """Despite a strong first-slot bias, combining the two orders gives P(ref better) > 0.5
    and a DICE score > 0.5 on every question (a swapped order mapping would give 0.5)."""
    params.tournament.prompt_version = version
    params.tournament.analysis = analysis
    name = f"dice-known-{version}-{analysis}"
    with scripted_model(name, "ok", next_token=prefers_reference) as m:
        verdicts = _judge(params, m.model).judge(_keys())
    for j in range(N_Q):
        ab, ba = verdicts[2 * j].probs, verdicts[2 * j + 1].probs
        assert ab is not None and ba is not None
        comb = combine_orders(ab, ba)  # a = ref (shown first in ab)
        assert comb.a == pytest.approx((0.7 + 0.4) / 2) and comb.a > 0.5 > comb.b
        assert score(comb, params.tournament.margin).s_a > 0.5
