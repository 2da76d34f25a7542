"""Gateway behaviour against scripted litellm providers (exact control of replies/failures)."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import litellm
import pytest
from _llm_testing import scripted_model
from litellm import exceptions as litellm_errors
from pydantic import BaseModel

from ragcourt.llm import ChatRequest, Gateway
from ragcourt.llm.accounting import reset_accounts
from ragcourt.llm.params import LLMParams


@pytest.fixture
def params(tmp_path: Path) -> Iterator[LLMParams]:
    reset_accounts()
    yield LLMParams(
        cache_dir=str(tmp_path / "cache"),
        metrics_dir=str(tmp_path / "metrics"),
        retry_backoff_s=0.001,
        max_retries=3,
        parse_retries=2,
    )
    reset_accounts()


class Verdict(BaseModel):
    score: float
    reason: str


def test_failing_provider_retries_then_error_row_scripted_model(params: LLMParams) -> None:
    def down(_msgs: list[dict[str, str]]) -> str:
        raise litellm_errors.RateLimitError("slow down", llm_provider="scripted", model="down")

    gw = Gateway(params, stage="t_fail")
    with scripted_model("down", down) as m:
        [res] = gw.chat([ChatRequest.of(m.model, None, "hello")])
    assert not res.ok
    assert len(m.calls) == 1 + params.max_retries  # first try + retries
    assert res.attempts == 4
    assert res.error is not None and "RateLimitError" in res.error and "4 attempts" in res.error
    counters = gw.account.as_dict()["models"][m.model]
    assert counters["errors"] == 1 and counters["retries"] == 3 and counters["model_calls"] == 4


def test_transient_failure_recovers_and_failures_are_not_cached_scripted_model(
    params: LLMParams,
) -> None:
    state = {"n": 0}

    def flaky(_msgs: list[dict[str, str]]) -> str:
        state["n"] += 1
        if state["n"] <= 2:
            raise litellm_errors.InternalServerError("503", llm_provider="scripted", model="flaky")
        return "fine"

    gw = Gateway(params, stage="t_flaky")
    with scripted_model("flaky", flaky) as m:
        [res] = gw.chat([ChatRequest.of(m.model, None, "q")])
        assert res.ok and res.text == "fine" and res.attempts == 3
        [again] = gw.chat([ChatRequest.of(m.model, None, "q")])
    assert again.cached and again.text == "fine"
    assert len(m.calls) == 3


def test_bad_request_is_not_retried_scripted_model(params: LLMParams) -> None:
    def bad(_msgs: list[dict[str, str]]) -> str:
        raise litellm_errors.BadRequestError(
            "context too long", model="bad", llm_provider="scripted"
        )

    with scripted_model("bad", bad) as m:
        [res] = Gateway(params, stage="t_bad").chat([ChatRequest.of(m.model, None, "q")])
    assert not res.ok and res.attempts == 1 and len(m.calls) == 1


def test_malformed_json_bounded_retry_then_failure_record_scripted_model(
    params: LLMParams,
) -> None:
    gw = Gateway(params, stage="t_json")
    with scripted_model("nojson", "I think the answer is good, score eight") as m:
        [res] = gw.structured([ChatRequest.of(m.model, "Reply in JSON.", "judge")], Verdict)
    assert not res.ok and res.value is None
    assert res.raw == "I think the answer is good, score eight"  # raw text kept
    assert res.attempts == params.parse_retries + 1
    assert len(m.calls) == params.parse_retries + 1
    assert res.error is not None and "not parsable after 3 attempts" in res.error
    # the parse error is fed back to the model on each retry
    last = m.calls[-1]
    assert last[-2] == {"role": "assistant", "content": "I think the answer is good, score eight"}
    assert "no JSON object" in last[-1]["content"] and '"score"' in last[-1]["content"]
    assert gw.account.as_dict()["models"][m.model]["parse_failures"] == 1


def test_json_repaired_on_retry_and_lenient_extraction_scripted_model(params: LLMParams) -> None:
    replies = iter(['{"score": "high"}', 'Sure! ```json\n{"score": 0.8, "reason": "ok"}\n```'])
    with scripted_model("fixes", lambda _m: next(replies)) as m:
        [res] = Gateway(params, stage="t_fix").structured(
            [ChatRequest.of(m.model, None, "judge")], Verdict
        )
    assert res.ok and res.value == Verdict(score=0.8, reason="ok") and res.attempts == 2
    assert "score" in m.calls[1][-1]["content"]  # validation error named the field
    assert m.params[0]["response_format"]["type"] == "json_schema"


def test_order_kept_and_concurrency_limited_scripted_model(params: LLMParams) -> None:
    params = params.model_copy(
        update={"concurrency": 16, "concurrency_per_model": {"scripted/": 3}}
    )
    active = {"now": 0, "max": 0}
    lock = threading.Lock()

    def echo(msgs: list[dict[str, str]]) -> str:
        return msgs[-1]["content"].upper()

    gw = Gateway(params, stage="t_conc")
    with scripted_model("echo", echo, delay_s=0.05) as m:
        orig = litellm.acompletion

        async def counting(**kw: object) -> object:
            with lock:
                active["now"] += 1
                active["max"] = max(active["max"], active["now"])
            try:
                return await orig(**kw)
            finally:
                with lock:
                    active["now"] -= 1

        litellm.acompletion = counting
        try:
            res = gw.chat([ChatRequest.of(m.model, None, f"q{i}") for i in range(12)])
        finally:
            litellm.acompletion = orig
    assert [r.text for r in res] == [f"Q{i}" for i in range(12)]
    assert active["max"] == 3


def test_top_logprobs_distribution_and_floor_as_last_resort_scripted_model(
    params: LLMParams,
) -> None:
    """C is not listed; its yes/no probes list neither yes nor no and the greedy reply "Z" is
    no label, so the floor (the smallest listed probability, an upper bound) is kept."""
    dist = {"A": 0.5, " A": 0.1, "B": 0.3, "\n": 0.05}
    gw = Gateway(params, stage="t_dist")
    with scripted_model("lp", "Z", next_token=lambda _m: dist) as m:
        [d] = gw.next_token_probs([ChatRequest.of(m.model, None, "pick")], ["A", "B", "C"])
    assert d.ok and d.method == "top_logprobs"
    assert d.raw["A"] == pytest.approx(0.6) and d.raw["B"] == pytest.approx(0.3)
    assert d.raw["C"] == pytest.approx(0.05) and d.fallback == ["C"]  # min listed: upper bound
    assert sum(d.probs.values()) == pytest.approx(1.0)
    assert m.params[0]["top_logprobs"] == params.next_token_top_logprobs
    assert m.params[0]["max_tokens"] == 1
    assert len(m.calls) == 1 + 3  # the call, then one probe per label
    with scripted_model("full", "Z", next_token=lambda _m: dist) as full:
        [d] = gw.next_token_probs([ChatRequest.of(full.model, None, "pick")], ["A", "B"])
    assert d.method == "top_logprobs" and d.fallback == [] and len(full.calls) == 1


def test_no_logprobs_gives_the_greedy_label_or_a_clear_error_scripted_model(
    params: LLMParams,
) -> None:
    gw = Gateway(params, stage="t_nolp")
    with scripted_model("nolp", "A") as m:  # provider that ignores logprobs
        [d] = gw.next_token_probs([ChatRequest.of(m.model, None, "pick")], ["A", "B"])
    assert d.ok and d.no_logprobs and d.method == "generated_label"
    assert d.probs == {"A": 1.0, "B": 0.0}
    with scripted_model("nolp2", "maybe") as m:
        [d] = gw.next_token_probs([ChatRequest.of(m.model, None, "pick")], ["A", "B"])
    assert not d.ok and d.no_logprobs and "none of the labels" in (d.error or "")


def test_accounting_file_content_scripted_model(params: LLMParams, tmp_path: Path) -> None:
    gw = Gateway(params, stage="t_acct")
    with scripted_model("acct", "two words") as m:
        reqs = [ChatRequest.of(m.model, None, "one two three"), ChatRequest.of(m.model, None, "x")]
        gw.chat(reqs)
        gw.chat(reqs[:1])  # cache hit
        Gateway(params, stage="t_acct").chat([ChatRequest.of(m.model, None, "y")])  # same stage
    path = gw.write_metrics()
    assert path == tmp_path / "metrics" / "llm_t_acct.json"
    data = json.loads(path.read_text())
    c = data["models"][m.model]
    assert c["requests"] == 4 and c["cache_hits"] == 1 and c["model_calls"] == 3
    assert c["prompt_tokens"] == 3 + 1 + 1 and c["completion_tokens"] == 2 * 3
    assert c["cost_usd"] == 0.0 and c["errors"] == 0
    assert data["total"]["requests"] == 4 and data["stage"] == "t_acct"
    assert data["wall_time_s"] > 0


def test_cache_disabled_calls_every_time_scripted_model(params: LLMParams) -> None:
    params = params.model_copy(update={"cache": False})
    with scripted_model("nocache", "r") as m:
        gw = Gateway(params, stage="t_nocache")
        gw.chat([ChatRequest.of(m.model, None, "q")])
        [res] = gw.chat([ChatRequest.of(m.model, None, "q")])
    assert not res.cached and len(m.calls) == 2


def test_api_key_never_in_errors_or_cache_scripted_model(
    params: LLMParams, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-test-SECRETSECRET1234567890"
    monkeypatch.setenv("SCRIPTED_API_KEY", secret)

    def leak(_msgs: list[dict[str, str]]) -> str:
        raise litellm_errors.AuthenticationError(
            f"bad key {secret}", llm_provider="scripted", model="leak"
        )

    gw = Gateway(params, stage="t_secret")
    with scripted_model("leak", leak) as m:
        [res] = gw.chat([ChatRequest.of(m.model, None, "q")])
    with scripted_model("ok", "fine") as m2:
        gw.chat([ChatRequest.of(m2.model, None, "q")])
    assert res.error is not None and secret not in res.error and "***" in res.error
    blobs = b"".join(p.read_bytes() for p in Path(params.cache_dir).rglob("*") if p.is_file())
    assert secret.encode() not in blobs
    assert secret not in gw.write_metrics().read_text()


def test_sync_api_inside_running_loop_scripted_model(params: LLMParams) -> None:
    async def inner() -> str:
        with scripted_model("inloop", "hi") as m:
            [res] = Gateway(params, stage="t_loop").chat([ChatRequest.of(m.model, None, "q")])
        return res.text

    assert asyncio.run(inner()) == "hi"
