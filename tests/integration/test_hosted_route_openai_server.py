"""The hosted route against local OpenAI-compatible HTTP servers (127.0.0.1, free ports):
the API base is part of the reply-cache key, one API base per model-string prefix, explicit
sampling params, fail-fast one-line errors, and the response_format fallback."""

from __future__ import annotations

import socket
import time
from pathlib import Path
from typing import Any

import pytest
from _llm_testing import openai_test_server
from pydantic import BaseModel

from ragcourt.llm import ChatRequest, Gateway
from ragcourt.llm.accounting import reset_accounts
from ragcourt.llm.params import LLMParams
from ragcourt.orchestration.llm_routes import routes_record
from ragcourt.orchestration.params import Params

KEY = "sk-local-route-test-0123456789"


def _params(tmp_path: Path, **kw: Any) -> LLMParams:
    base: dict[str, Any] = {
        "cache_dir": str(tmp_path / "cache"),
        "metrics_dir": str(tmp_path / "m"),
        "retry_backoff_s": 0.01,
    }
    return LLMParams(**{**base, **kw})


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(autouse=True)
def _clean(monkeypatch: pytest.MonkeyPatch) -> None:
    reset_accounts()
    for var in ("OPENAI_API_BASE", "OPENAI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)


def test_changed_api_base_is_a_new_cache_key_and_dvc_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    req = ChatRequest.of("openai/same-name", None, "which server?")
    with (
        openai_test_server(reply="first server") as one,
        openai_test_server(reply="second server") as two,
    ):
        monkeypatch.setenv("OPENAI_API_BASE", one.base_url)
        record_one = routes_record(Params(llm=_params(tmp_path, model="openai/same-name")), [])
        [a] = Gateway(_params(tmp_path), "t_base").chat([req])
        monkeypatch.setenv("OPENAI_API_BASE", two.base_url)
        record_two = routes_record(Params(llm=_params(tmp_path, model="openai/same-name")), [])
        [b] = Gateway(_params(tmp_path), "t_base").chat([req])  # same cache directory
    assert a.ok and b.ok and a.text == "first server" and b.text == "second server"
    assert not b.cached and len(one.requests) == 1 and len(two.requests) == 1
    # what DVC sees (data/llm/routes.json) changes with the base; no key in it
    judge = record_one["stages"]["judge"]["openai/same-name"]
    assert judge["api_base"] == one.base_url and judge["base_from"] == "$OPENAI_API_BASE"
    assert record_two["stages"]["judge"]["openai/same-name"]["api_base"] == two.base_url
    assert KEY not in str(record_one) and judge["api_key_env"] == "OPENAI_API_KEY"
    blobs = b"".join(p.read_bytes() for p in (tmp_path / "cache").rglob("*") if p.is_file())
    assert KEY.encode() not in blobs


def test_one_api_base_per_prefix_and_explicit_sampling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUDGE_KEY", KEY)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-answerer-key-000000000")
    with openai_test_server(reply="judge") as judge, openai_test_server(reply="answer") as ans:
        params = _params(
            tmp_path,
            top_p=0.9,
            endpoints={
                "openai/judge-": {
                    "api_base": judge.base_url,
                    "api_key_env": "JUDGE_KEY",
                    "extra_body": {"repeat_penalty": 1.0},
                },
                "openai/": {"api_base": ans.base_url},
            },
        )
        res = Gateway(params, "t_prefix").chat(
            [
                ChatRequest.of("openai/judge-m", None, "q", temperature=0.0, seed=7),
                ChatRequest.of("openai/answer-m", None, "q"),
            ]
        )
    assert [r.text for r in res] == ["judge", "answer"]
    sent = judge.requests[0]
    assert sent["temperature"] == 0.0 and sent["top_p"] == 0.9 and sent["seed"] == 7
    assert sent["repeat_penalty"] == 1.0  # extra_body reaches the server
    assert "repeat_penalty" not in ans.requests[0]


def test_missing_key_fails_fast_without_a_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with openai_test_server() as srv:
        monkeypatch.setenv("OPENAI_API_BASE", srv.base_url)
        t0 = time.perf_counter()
        res = Gateway(_params(tmp_path), "t_nokey").chat(
            [ChatRequest.of("openai/m", None, f"q{i}") for i in range(5)]
        )
        elapsed = time.perf_counter() - t0
    assert srv.requests == [] and elapsed < 5
    assert len(res) == 5 and all(not r.ok and r.attempts == 0 for r in res)
    err = res[0].error or ""
    assert "\n" not in err and "openai/m" in err and "127.0.0.1" in err
    assert "set OPENAI_API_KEY" in err


def test_connection_refused_fails_fast_with_the_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    base = f"http://127.0.0.1:{_free_port()}/v1"
    monkeypatch.setenv("OPENAI_API_BASE", base)
    res = Gateway(_params(tmp_path, max_retries=3, retry_backoff_s=2.0), "t_refused").chat(
        [ChatRequest.of("openai/m", None, f"q{i}") for i in range(3)]
    )
    assert len(res) == 3 and all(not r.ok for r in res)
    assert max(r.attempts for r in res) <= 1  # never retried (a retry would wait 2 s)
    err = res[0].error or ""
    assert "connection refused" in err and base.rsplit("/", 1)[0] in err and "\n" not in err


@pytest.mark.parametrize(("code", "words"), [(401, "key was refused"), (404, "unknown model")])
def test_auth_and_unknown_model_are_not_retried(
    code: int, words: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with openai_test_server(status=lambda n: code) as srv:
        monkeypatch.setenv("OPENAI_API_BASE", srv.base_url)
        res = Gateway(_params(tmp_path, concurrency=1), "t_fatal").chat(
            [ChatRequest.of("openai/m", None, f"q{i}") for i in range(4)]
        )
    assert len(res) == 4 and all(not r.ok and words in (r.error or "") for r in res)
    assert len(srv.requests) == 1  # the first refusal stops the rest of the batch
    assert KEY not in (res[0].error or "")


class Grade(BaseModel):
    grade: int


def test_refused_response_format_falls_back_to_prompt_and_validation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    holder: dict[str, Any] = {}

    def status(n: int) -> int:  # this server refuses response_format, like some providers
        return 400 if "response_format" in holder["srv"].requests[n] else 200

    with openai_test_server(reply='{"grade": 2}', status=status) as srv:
        holder["srv"] = srv
        monkeypatch.setenv("OPENAI_API_BASE", srv.base_url)
        gw = Gateway(_params(tmp_path), "t_json")
        [r] = gw.structured([ChatRequest.of("openai/gpt-4o-mini", None, "grade as JSON")], Grade)
        [r2] = gw.structured([ChatRequest.of("openai/gpt-4o-mini", None, "again, JSON")], Grade)
    assert r.ok and r.value == Grade(grade=2) and r2.ok
    asked = ["response_format" in body for body in srv.requests]
    assert asked == [True, False, False]  # refused once, then asked by prompt only


def test_unparsable_reply_names_the_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with openai_test_server(reply="no json here") as srv:
        monkeypatch.setenv("OPENAI_API_BASE", srv.base_url)
        [r] = Gateway(_params(tmp_path, parse_retries=1), "t_nojson").structured(
            [ChatRequest.of("openai/some-model", None, "JSON please")], Grade
        )
    assert not r.ok and (r.error or "").startswith("openai/some-model: reply not parsable")


def test_doctor_checks_a_hosted_model_without_calling_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ragcourt.cli.doctor import check_hosted_model

    params = Params(llm=_params(tmp_path, model="openai/judge"))
    with openai_test_server(reply="OK") as srv:
        monkeypatch.setenv("OPENAI_API_BASE", srv.base_url)
        nokey = {c.name: c for c in check_hosted_model(params, "openai/judge", ["judge"])}
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        ok = {c.name: c for c in check_hosted_model(params, "openai/judge", ["judge"])}
        assert srv.requests == []  # no chat call without --call
        called = check_hosted_model(params, "openai/judge", ["answer"], call=True)
        assert len(srv.requests) == 1
    assert nokey["hosted openai/judge key"].status == "fail"
    assert "OPENAI_API_KEY" in nokey["hosted openai/judge key"].detail
    assert ok["hosted openai/judge key"].status == "ok"
    assert ok["hosted openai/judge API base"].status == "ok"  # it answers (no model list)
    assert "hosted openai/judge logprobs" in ok  # the judge stage reads next-token probabilities
    assert called[-1].name == "hosted openai/judge call" and called[-1].status == "ok"
    down = f"http://127.0.0.1:{_free_port()}/v1"
    monkeypatch.setenv("OPENAI_API_BASE", down)
    gone = {c.name: c for c in check_hosted_model(params, "openai/judge", ["answer"])}
    assert gone["hosted openai/judge API base"].status == "fail"
    assert "unreachable" in gone["hosted openai/judge API base"].detail
