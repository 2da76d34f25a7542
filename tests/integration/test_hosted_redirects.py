"""No key follows a redirect: hosted calls through the real gateway and litellm, against two real
local HTTP servers on 127.0.0.1, one redirecting every request to the other, which records the
headers it receives. For every provider family the docs name (OpenAI-compatible, anthropic,
azure, hosted_vllm, ollama) and the other litellm routes that send a key header
(``x-api-key``, ``api-key``, ``x-goog-api-key``, ``Authorization``), the second server never
sees the key, and the call is one fatal line naming the redirect."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from ragcourt.llm import ChatRequest, Gateway
from ragcourt.llm.accounting import reset_accounts
from ragcourt.llm.params import EndpointParams, LLMParams

KEY = "rc-secret-7f3a9c21d4e8b6"
COMPLETION = {
    "id": "x",
    "object": "chat.completion",
    "created": 0,
    "model": "m",
    "choices": [
        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "hi"}}
    ],
    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
}


@dataclass
class Servers:
    """``redirect`` answers every request with ``status`` to the same path on ``capture``
    (or on itself under ``/same`` when ``same_origin``); ``capture`` records the headers."""

    redirect: str = ""
    capture: str = ""
    status: int = 307
    same_origin: bool = False
    seen: list[dict[str, str]] = field(default_factory=list)


def _serve(handler: type[BaseHTTPRequestHandler]) -> tuple[ThreadingHTTPServer, str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


@pytest.fixture
def servers() -> Iterator[Servers]:
    state = Servers()

    class Capture(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            return None

        def _answer(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            state.seen.append(dict(self.headers))
            body = json.dumps(COMPLETION).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = _answer

    class Redirect(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            return None

        def _redirect(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if state.same_origin and self.path.startswith("/same/"):
                state.seen.append(dict(self.headers))
                body = json.dumps(COMPLETION).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            target = f"/same{self.path}" if state.same_origin else state.capture + self.path
            self.send_response(state.status)
            self.send_header("Location", target)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_GET = do_POST = _redirect

    capture, state.capture = _serve(Capture)
    redirect, state.redirect = _serve(Redirect)
    yield state
    for s in (capture, redirect):
        s.shutdown()
        s.server_close()


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    reset_accounts()
    monkeypatch.setenv("RC_TEST_KEY", KEY)
    monkeypatch.setenv("AZURE_API_VERSION", "2024-06-01")


def _call(tmp_path: Path, provider: str, base: str, n: int = 1) -> list[Any]:
    params = LLMParams(
        cache=False,
        cache_dir=str(tmp_path / "cache"),
        metrics_dir=str(tmp_path / "m"),
        max_retries=1,
        retry_backoff_s=0.01,
        timeout_s=20,
        concurrency=1,  # one at a time, so the batch shows the route's fail-fast
        endpoints={f"{provider}/": EndpointParams(api_base=base, api_key_env="RC_TEST_KEY")},
    )
    reqs = [ChatRequest.of(f"{provider}/m", None, f"hello {i}") for i in range(n)]
    return Gateway(params, "t_redirect").chat(reqs)


def _leaks(state: Servers) -> list[str]:
    return [k for headers in state.seen for k, v in headers.items() if KEY in v]


DOCUMENTED = ["openai", "anthropic", "azure", "hosted_vllm", "ollama"]
OTHERS = [
    "ollama_chat",
    "gemini",
    "mistral",
    "groq",
    "openrouter",
    "deepseek",
    "together_ai",
    "xai",
    "fireworks_ai",
    "cohere_chat",
    "databricks",
    "huggingface",
    "azure_ai",
    "text-completion-openai",
]


@pytest.mark.parametrize("provider", DOCUMENTED)
def test_documented_providers_never_follow_a_redirect_to_another_host(
    tmp_path: Path, servers: Servers, provider: str
) -> None:
    results = _call(tmp_path, provider, servers.redirect, n=3)
    assert _leaks(servers) == [] and servers.seen == []  # not a single request reached it
    host = servers.redirect  # the route names its host with the scheme
    first = results[0]
    assert not first.ok and first.error is not None
    assert first.error.startswith(
        f"{provider}/m at {host}: the server redirected to another origin ({servers.capture}/"
    )
    assert first.error.endswith(
        f"); not followed, so the key stays with {host}: point the API base "
        f"(llm.endpoints['{provider}/']) at the server that answers"
    )
    assert "\n" not in first.error and KEY not in first.error
    # fatal for the route: the rest of the batch fails at once with the same line
    assert [r.error for r in results] == [first.error] * 3
    assert sum(r.attempts for r in results) == 1


@pytest.mark.parametrize("provider", OTHERS)
def test_other_key_header_routes_never_send_the_key_elsewhere(
    tmp_path: Path, servers: Servers, provider: str
) -> None:
    [res] = _call(tmp_path, provider, servers.redirect)
    assert _leaks(servers) == []
    assert servers.seen == [] and not res.ok
    assert "redirected to another origin" in (res.error or "")


@pytest.mark.parametrize("status", [301, 302, 303, 308])
@pytest.mark.parametrize("provider", ["anthropic", "azure", "openai"])
def test_every_redirect_status_is_refused(
    tmp_path: Path, servers: Servers, provider: str, status: int
) -> None:
    servers.status = status
    [res] = _call(tmp_path, provider, servers.redirect)
    assert _leaks(servers) == [] and servers.seen == []
    assert not res.ok and "redirected to another origin" in (res.error or "")


def test_aiohttp_route_drops_its_only_credential_header(tmp_path: Path, servers: Servers) -> None:
    """``aiohttp_openai`` calls through a raw aiohttp session (not httpx): it follows the
    redirect, but aiohttp drops ``Authorization``, the one key header it sends."""
    _call(tmp_path, "aiohttp_openai", servers.redirect)
    assert _leaks(servers) == []


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_redirect_within_the_same_origin_is_followed(
    tmp_path: Path, servers: Servers, provider: str
) -> None:
    servers.same_origin = True
    [res] = _call(tmp_path, provider, servers.redirect)
    # it reached the same server's other path, key and all (anthropic's reply does not parse
    # as an anthropic reply, so that call is retried once)
    assert servers.seen and all(KEY in str(headers) for headers in servers.seen)
    if provider == "openai":
        assert res.ok and res.text == "hi", res.error
