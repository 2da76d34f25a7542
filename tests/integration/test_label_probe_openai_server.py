"""Hosted next-token grading when the provider's top logprobs miss labels: litellm's real
``openai/`` provider against the local OpenAI-compatible test server, whose top-k list for
the judge prompt holds only the grade "1". The gateway then asks one yes/no probe per label
(``label_probe``), else takes the greedy label (``generated_label``), else keeps the floors
(``top_logprobs`` with ``fallback``); relevance rows and the judge summary say which."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest
from _llm_testing import Messages, openai_test_server

from ragcourt.judging.relevance import grade_passage_relevance
from ragcourt.judging.summary import grading_fallbacks
from ragcourt.judging.udcg import NO_RESPONSE, abstention_probabilities
from ragcourt.llm import ChatRequest, Gateway
from ragcourt.llm.accounting import reset_accounts
from ragcourt.llm.params import LLMParams

KEY = "sk-local-test-server-label-probe"
PROBE = re.compile(r'Would your answer be "([^"]+)"\? Reply with one word: yes or no\.$')
# P(yes) of each probe by the passage's word "grade<N>": the grade the server "believes"
BELIEF = {
    "grade0": {"0": 0.9, "1": 0.2, "2": 0.05},
    "grade2": {"0": 0.05, "1": 0.2, "2": 0.9},
}


def _judge_top_k(content: str) -> dict[str, float]:
    """The judge prompt's top-k: "1" and non-labels; "0", "2" and "NO" are never listed."""
    return {"1": 0.4, "The": 0.3, "I": 0.2, "**": 0.1}


def _next_token(msgs: Messages) -> dict[str, float]:
    content = msgs[-1]["content"]
    probe = PROBE.search(content)
    if probe is None:
        return _judge_top_k(content)
    if "silent" in content:  # a probe whose list holds neither yes nor no
        return {"Maybe": 0.6, "The": 0.4}
    label = probe.group(1)
    belief = next((b for word, b in BELIEF.items() if word in content), {})
    p = 0.7 if label == NO_RESPONSE else belief.get(label, 0.5)
    return {"Yes": p * 0.9, "No": (1 - p) * 0.9, "Maybe": 0.1}


def _top_token(msgs: Messages) -> str:
    dist = _next_token(msgs)
    return max(dist, key=lambda t: dist[t])


@pytest.fixture
def params(tmp_path: Path) -> Iterator[LLMParams]:
    reset_accounts()
    yield LLMParams(
        cache_dir=str(tmp_path / "cache"), metrics_dir=str(tmp_path / "m"), retry_backoff_s=0.01
    )
    reset_accounts()


@pytest.fixture
def probing_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[dict[str, object]]]:
    with openai_test_server(reply=_top_token, next_token=_next_token) as srv:
        monkeypatch.setenv("OPENAI_API_BASE", srv.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        yield srv.requests


def _req(text: str) -> ChatRequest:
    return ChatRequest.of("openai/judge", "Grade 0, 1 or 2.", text, max_tokens=1)


def test_missing_labels_are_probed_one_call_each(
    probing_server: list[dict[str, object]], params: LLMParams
) -> None:
    gw = Gateway(params, stage="t_probe")
    low, high = gw.next_token_probs([_req("p grade0"), _req("p grade2")], ["0", "1", "2"])
    assert low.ok and low.method == "label_probe" and low.fallback == []
    assert low.raw == pytest.approx(BELIEF["grade0"])
    assert high.raw == pytest.approx(BELIEF["grade2"])
    expected = [sum(float(g) * p for g, p in d.probs.items()) for d in (low, high)]
    assert expected[0] < 0.5 < 1.5 < expected[1]  # the floors would give both the same grade
    probes = [r for r in probing_server if PROBE.search(str(r["messages"][-1]["content"]))]  # type: ignore[index]
    assert len(probing_server) == 2 + 6 and len(probes) == 6
    assert all(r["max_tokens"] == 1 and r["top_logprobs"] == 20 for r in probes)
    again = Gateway(params, stage="t_probe").next_token_probs([_req("p grade0")], ["0", "1", "2"])
    assert again[0].cached and again[0].probs == low.probs and len(probing_server) == 8


def test_covered_labels_are_read_from_the_first_call_only(
    probing_server: list[dict[str, object]], params: LLMParams
) -> None:
    [d] = Gateway(params, stage="t_cover").next_token_probs([_req("x")], ["1", "I"])
    assert d.ok and d.method == "top_logprobs" and d.fallback == []
    assert d.raw == pytest.approx({"1": 0.4, "I": 0.2}) and len(probing_server) == 1


def test_silent_probes_fall_back_to_the_greedy_label_then_the_floors(
    probing_server: list[dict[str, object]], params: LLMParams
) -> None:
    gw = Gateway(params, stage="t_silent")
    [greedy] = gw.next_token_probs([_req("silent")], ["0", "1", "2"])
    assert greedy.ok and greedy.method == "generated_label"
    assert greedy.probs == {"0": 0.0, "1": 0.0, "2": 0.0} | {"1": 1.0}
    # the greedy token "1" is no label here: the floors are kept, and named
    [floor] = gw.next_token_probs([_req("silent")], ["0", "2"])
    assert floor.ok and floor.method == "top_logprobs" and floor.fallback == ["0", "2"]
    assert floor.raw == pytest.approx({"0": 0.1, "2": 0.1})


def test_no_logprobs_gives_the_greedy_label(
    monkeypatch: pytest.MonkeyPatch, params: LLMParams
) -> None:
    with openai_test_server(reply="2") as srv:  # a provider that ignores logprobs
        monkeypatch.setenv("OPENAI_API_BASE", srv.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        gw = Gateway(params, stage="t_nolp")
        [d] = gw.next_token_probs([_req("x")], ["0", "1", "2"])
        [u] = gw.next_token_probs([_req("y")], [NO_RESPONSE])
    assert d.ok and d.no_logprobs and d.method == "generated_label" and d.probs["2"] == 1.0
    assert u.ok and u.raw == {NO_RESPONSE: 0.0} and len(srv.requests) == 2


def test_relevance_and_udcg_rows_record_the_probe_and_the_summary_flags_it(
    probing_server: list[dict[str, object]], params: LLMParams
) -> None:
    gw = Gateway(params, stage="t_rows")
    passages = pl.DataFrame(
        {
            "question_id": ["q1", "q1", "q1"],
            "chunk_id": ["c0", "c2", "c9"],
            "doc_id": ["d", "d", "d"],
            "text": ["about grade0", "about grade2", "silent passage"],
            "n_systems": pl.Series([1, 1, 1], dtype=pl.Int32),
        }
    )
    questions = pl.DataFrame({"question_id": ["q1"], "question": ["what?"]})
    rel = grade_passage_relevance(passages, questions, gw, "openai/judge", version="v5")
    assert rel["relevance"].to_list() == [0, 2, 1]
    assert rel["grading_method"].to_list() == ["label_probe", "label_probe", "generated_label"]
    assert rel["form"].to_list() == ["probability"] * 3
    probs = abstention_probabilities(passages, questions, gw, "openai/judge", version="v5")
    assert probs["p_method"].to_list() == ["label_probe"] * 2 + ["generated_label"]
    assert probs["p_no_response"].to_list() == pytest.approx([0.7, 0.7, 0.0])
    flags = grading_fallbacks([*rel["grading_method"].to_list(), "logits"])
    assert flags.rows == 4 and flags.fallback_rows == 3 and flags.share == pytest.approx(0.75)
    assert flags.methods == {"label_probe": 2, "generated_label": 1, "logits": 1}
