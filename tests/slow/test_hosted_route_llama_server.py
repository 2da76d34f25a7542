"""The hosted route against two REAL ``llama_cpp.server`` processes serving the embedded
SmolLM2-135M: a changed API base is a cache miss (the second server answers), explicit
sampling params (``extra_body: {repeat_penalty: 1.0}``) give the local route's greedy replies,
and a missing key fails at once with one line and no request."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from ragcourt.llm import ChatRequest, Gateway
from ragcourt.llm.accounting import reset_accounts
from ragcourt.llm.params import EndpointParams, LLMParams

QUESTIONS = [
    "What is the capital of France?",
    "Name a primary colour.",
    "How many legs does a spider have?",
    "What do bees make?",
]


def _reqs(model: str) -> list[ChatRequest]:
    return [
        ChatRequest.of(model, "Answer in one short sentence.", q, max_tokens=24, seed=0)
        for q in QUESTIONS
    ]


def test_api_base_sampling_and_missing_key_on_real_servers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from _llama_server import llama_server, missing_server_extras, smollm2_gguf

    missing = missing_server_extras()
    if missing:
        pytest.skip(f"llama_cpp.server needs {missing}")
    reset_accounts()
    for var in ("OPENAI_API_BASE", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-no-key-needed-locally")
    sampling = {"openai/": EndpointParams(extra_body={"repeat_penalty": 1.0})}
    local = Gateway(LLMParams(cache=False), "t_local").chat(_reqs("local/smollm2-135m"))
    gguf = smollm2_gguf()
    with (
        llama_server(gguf, n_ctx=1024, n_threads=1) as one,
        llama_server(gguf, n_ctx=1024, n_threads=1) as two,
    ):

        def run(base: str) -> list[str]:
            monkeypatch.setenv("OPENAI_API_BASE", base)
            params = LLMParams(
                cache_dir=str(tmp_path / "cache"),  # one cache for both servers
                metrics_dir=str(tmp_path / "m"),
                endpoints=sampling,
            )
            res = Gateway(params, "t_servers").chat(_reqs("openai/smollm2-135m"))
            assert all(r.ok for r in res), [r.error for r in res]
            return ["cached" if r.cached else r.text for r in res]

        first = run(one.base_url)
        again = run(one.base_url)
        other = run(two.base_url)
        monkeypatch.delenv("OPENAI_API_KEY")
        t0 = time.perf_counter()
        params = LLMParams(cache_dir=str(tmp_path / "nokey"), metrics_dir=str(tmp_path / "m"))
        nokey = Gateway(params, "t_nokey").chat(_reqs("openai/smollm2-135m"))
        elapsed = time.perf_counter() - t0
    assert again == ["cached"] * len(QUESTIONS)  # same server: served from the cache
    assert "cached" not in other  # another base: every request went to the second server
    assert other == first  # same model, same explicit sampling
    assert first == [r.text for r in local]  # explicit sampling = the local greedy replies
    assert elapsed < 5 and all(not r.ok and r.attempts == 0 for r in nokey)
    err = nokey[0].error or ""
    assert "\n" not in err and "set OPENAI_API_KEY" in err and "127.0.0.1" in err
