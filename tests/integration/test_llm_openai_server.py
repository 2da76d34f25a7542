"""The hosted-model path end to end: litellm's real ``openai/`` provider against a local
OpenAI-compatible HTTP server (127.0.0.1, free port) with scripted status codes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from _llm_testing import OpenAITestServer, openai_test_server

from ragcourt.llm import ChatRequest, Gateway
from ragcourt.llm.accounting import reset_accounts
from ragcourt.llm.params import LLMParams

KEY = "sk-local-test-server-0123456789"


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAITestServer]:
    statuses = {0: 429, 1: 503}  # first two requests fail with retryable codes
    with openai_test_server(
        delay_s=0.05,
        reply=lambda msgs: msgs[-1]["content"][::-1],
        status=lambda n: statuses.get(n, 200),
        next_token={"B": 0.6, " A": 0.3, "Z": 0.1},
    ) as srv:
        monkeypatch.setenv("OPENAI_API_BASE", srv.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        yield srv


def test_hosted_retries_concurrency_logprobs_and_no_key_leak(
    server: OpenAITestServer, tmp_path: Path
) -> None:
    reset_accounts()
    params = LLMParams(
        cache_dir=str(tmp_path / "c"),
        metrics_dir=str(tmp_path / "m"),
        retry_backoff_s=0.01,
        concurrency=4,
        concurrency_per_model={"openai/": 2},
    )
    gw = Gateway(params, stage="t_hosted")
    [first] = gw.chat([ChatRequest.of("openai/fake", None, "abc")])
    assert first.ok and first.text == "cba" and first.attempts == 3  # 429, 503, then 200
    res = gw.chat([ChatRequest.of("openai/fake", None, f"q{i}") for i in range(8)])
    assert [r.text for r in res] == [f"{i}q" for i in range(8)]
    assert server.max_in_flight == 2  # the per-model limit, below the global 4
    [d] = gw.next_token_probs([ChatRequest.of("openai/fake", None, "pick")], ["A", "B", "C"])
    assert d.ok and d.raw["B"] == pytest.approx(0.6) and d.raw["A"] == pytest.approx(0.3)
    assert d.fallback == ["C"] and d.raw["C"] == pytest.approx(0.1)
    sent = server.requests[-1]
    assert sent["logprobs"] is True and sent["top_logprobs"] == 20 and sent["max_tokens"] == 1
    acct = gw.write_metrics().read_text()
    assert '"retries": 2' in acct and KEY not in acct
    blobs = b"".join(p.read_bytes() for p in (tmp_path / "c").rglob("*") if p.is_file())
    assert KEY.encode() not in blobs
    reset_accounts()
