"""Test helpers for the LLM gateway: scripted models (``scripted/<name>``) for tests that need
exact control of replies, and a local OpenAI-compatible server (:func:`openai_test_server`).
Tests import it as ``from _llm_testing import ...`` (``tests/`` is on ``sys.path``).

``scripted_model(name, reply, next_token=None)`` registers a litellm custom provider whose
text reply is ``reply(messages)`` (a str is a constant reply; raising simulates a provider
failure: raise ``litellm.RateLimitError(...)`` etc. to pick the error class, any other
exception reaches the gateway as ``litellm.APIConnectionError``). When logprobs are requested
and ``next_token(messages) -> {token: prob}`` is given, the reply carries OpenAI-format
``top_logprobs`` for the first position (the hosted-model path); without it, no logprobs,
like a provider that does not support them. Token counts are whitespace word counts.

    with scripted_model("judge", lambda msgs: '{"score": 1}') as m:
        Gateway(params.llm, stage="test").chat([ChatRequest.of(m.model, None, "hi")])
        assert len(m.calls) == 1
"""

from __future__ import annotations

import asyncio
import math
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ragcourt.llm import providers

if TYPE_CHECKING:
    from litellm.llms.custom_llm import CustomLLM
    from litellm.types.utils import ModelResponse

Messages = list[dict[str, str]]
ReplyFn = Callable[[Messages], str]
NextTokenFn = Callable[[Messages], dict[str, float]]


@dataclass
class ScriptedModel:
    """A registered script; ``calls`` holds the messages of every call it received."""

    name: str
    reply: ReplyFn
    next_token: NextTokenFn | None = None
    delay_s: float = 0.0
    calls: list[Messages] = field(default_factory=list)
    params: list[dict[str, Any]] = field(default_factory=list)

    @property
    def model(self) -> str:
        return f"scripted/{self.name}"


_SCRIPTS: dict[str, ScriptedModel] = {}
_SCRIPTS_LOCK = threading.Lock()


def _words(text: str) -> int:
    return len(text.split())


def _handler() -> CustomLLM:
    from litellm.llms.custom_llm import CustomLLM

    class ScriptedProvider(CustomLLM):
        """Replies from the script registered under the model name (litellm calls a handler
        with keyword arguments only: ``model``, ``messages``, ``optional_params``, ...)."""

        async def acompletion(self, *args: Any, **kwargs: Any) -> ModelResponse:
            model: str = kwargs["model"]
            optional_params: dict[str, Any] = kwargs["optional_params"]
            script = _SCRIPTS.get(model)
            if script is None:
                raise ValueError(f"no scripted model named '{model}' is registered")
            msgs = [{"role": m["role"], "content": m["content"]} for m in kwargs["messages"]]
            script.calls.append(msgs)
            script.params.append(dict(optional_params))
            if script.delay_s:
                await asyncio.sleep(script.delay_s)
            text = script.reply(msgs)
            content = None
            if optional_params.get("logprobs") and script.next_token is not None:
                content = _first_position(script.next_token(msgs), optional_params)
            return providers.model_response(
                f"scripted/{model}",
                text,
                prompt_tokens=sum(_words(m["content"]) for m in msgs),
                completion_tokens=_words(text),
                logprobs_content=content,
            )

    return ScriptedProvider()


def _first_position(
    dist: dict[str, float], optional_params: dict[str, Any]
) -> list[dict[str, Any]]:
    k = int(optional_params.get("top_logprobs") or 1)
    top = sorted(dist.items(), key=lambda kv: -kv[1])[:k]
    listed = [{"token": t, "logprob": math.log(p), "bytes": None} for t, p in top if p > 0]
    if not listed:
        return []
    return [{**listed[0], "top_logprobs": listed}]


def _reply_fn(reply: ReplyFn | str) -> ReplyFn:
    """``reply`` itself, or a function that always returns the string ``reply``."""
    if not isinstance(reply, str):
        return reply
    text = reply

    def constant(_messages: Messages) -> str:
        return text

    return constant


@contextmanager
def scripted_model(
    name: str,
    reply: ReplyFn | str,
    next_token: NextTokenFn | None = None,
    delay_s: float = 0.0,
) -> Iterator[ScriptedModel]:
    """Register ``scripted/<name>`` for the duration of the block."""
    fn = _reply_fn(reply)
    script = ScriptedModel(name, fn, next_token, delay_s)
    with _SCRIPTS_LOCK:
        if name in _SCRIPTS:
            raise ValueError(f"scripted model '{name}' is already registered")
        _SCRIPTS[name] = script
        if providers.registered("scripted") is None:
            providers.register("scripted", _handler())
    try:
        yield script
    finally:
        with _SCRIPTS_LOCK:
            _SCRIPTS.pop(name, None)


@dataclass
class OpenAITestServer:
    """A running local OpenAI-compatible server (see :func:`openai_test_server`)."""

    base_url: str
    requests: list[dict[str, Any]] = field(default_factory=list)
    max_in_flight: int = 0


@contextmanager
def openai_test_server(
    delay_s: float = 0.0,
    reply: ReplyFn | str = "ok",
    status: Callable[[int], int] | None = None,
    next_token: dict[str, float] | NextTokenFn | None = None,
) -> Iterator[OpenAITestServer]:
    """Serve ``POST /v1/chat/completions`` on 127.0.0.1 (free port) from a background thread.

    Each request sleeps ``delay_s``, then answers ``reply(messages)``; ``status(n)`` (n = the
    0-based request number) may return an HTTP error code instead of 200; ``next_token``
    (a dict, or a function of the messages) gives the first position's ``top_logprobs``
    when the request asks for logprobs.
    Use with a litellm model ``openai/<anything>`` and ``api_base = server.base_url``.
    """
    from aiohttp import web

    fn = _reply_fn(reply)
    server = OpenAITestServer(base_url="")
    in_flight = {"n": 0}

    async def completions(request: web.Request) -> web.Response:
        body = await request.json()
        n = len(server.requests)
        server.requests.append(body)
        in_flight["n"] += 1
        server.max_in_flight = max(server.max_in_flight, in_flight["n"])
        try:
            if delay_s:
                await asyncio.sleep(delay_s)
            code = status(n) if status is not None else 200
            if code != 200:
                err = {"error": {"message": f"scripted status {code}", "type": "server_error"}}
                return web.json_response(err, status=code)
            msgs = body.get("messages", [])
            text = fn(msgs)
            choice: dict[str, Any] = {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": text},
            }
            if body.get("logprobs") and next_token is not None:
                dist = next_token if isinstance(next_token, dict) else next_token(msgs)
                choice["logprobs"] = {"content": _first_position(dist, body)}
            usage = {
                "prompt_tokens": sum(_words(str(m.get("content", ""))) for m in msgs),
                "completion_tokens": _words(text),
            }
            usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
            return web.json_response(
                {
                    "id": f"chatcmpl-{n}",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body.get("model", ""),
                    "choices": [choice],
                    "usage": usage,
                }
            )
        finally:
            in_flight["n"] -= 1

    ready = threading.Event()
    stop: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []  # set once serving

    def serve() -> None:
        async def main() -> None:
            app = web.Application()
            app.router.add_post("/v1/chat/completions", completions)
            app.router.add_post("/chat/completions", completions)
            runner = web.AppRunner(app, access_log=None)
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0)
            await site.start()
            listener = site._server
            assert isinstance(listener, asyncio.Server)
            port = listener.sockets[0].getsockname()[1]
            server.base_url = f"http://127.0.0.1:{port}/v1"
            done = asyncio.Event()
            stop.append((asyncio.get_running_loop(), done))
            ready.set()
            await done.wait()
            await runner.cleanup()

        asyncio.run(main())

    thread = threading.Thread(target=serve, name="openai-test-server", daemon=True)
    thread.start()
    if not ready.wait(30):
        raise RuntimeError("the OpenAI test server did not start")
    try:
        yield server
    finally:
        loop, event = stop[0]
        loop.call_soon_threadsafe(event.set)
        thread.join(10)
