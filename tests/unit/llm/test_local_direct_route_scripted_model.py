"""The gateway calls local models directly: the provider must see exactly the
arguments litellm would hand it, and replies, distributions, structured values, accounting
and error texts must equal the ``litellm.acompletion`` route's (``Gateway.local_direct``).

The model is scripted (a stand-in for ``LocalModel`` behind ``get_model``), so this checks the
routing only; ``tests/slow/test_prefix_reuse_identity.py`` runs the real model.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from litellm.types.utils import ModelResponse
from pydantic import BaseModel

from ragcourt.llm import ChatRequest, Gateway, local_provider, providers
from ragcourt.llm.accounting import reset_accounts
from ragcourt.llm.local_provider import Generation
from ragcourt.llm.params import LLMParams

MODEL = "local/smollm2-135m"  # in the registry (cache keys name its sha256); never loaded here


class Score(BaseModel):
    score: int


class FakeLocalModel:
    """Records every call; replies are a function of the arguments."""

    name = "smollm2-135m"

    def __init__(self, fail: Exception | None = None) -> None:
        self.lock = threading.Lock()
        self.calls: list[tuple[str, Any, dict[str, Any]]] = []
        self.fail = fail

    def generate(self, messages: list[dict[str, str]], **kw: Any) -> Generation:
        deadline = kw.pop("deadline")
        self.calls.append(("generate", messages, {**kw, "has_deadline": deadline is not None}))
        if self.fail is not None:
            raise self.fail
        last = messages[-1]["content"]
        if kw["response_format"] is not None:
            text = '{"score": 3}' if "again" not in last else "not json"
        else:
            text = last[::-1][: kw["max_tokens"]]
        lps = None
        if kw["want_logprobs"]:
            lps = [
                {
                    "token": ch,
                    "logprob": -0.1 * (i + 1),
                    "bytes": list(ch.encode()),
                    "top_logprobs": [
                        {"token": ch, "logprob": -0.1 * (i + 1)},
                        {"token": "?", "logprob": -2.5 - i},
                    ][: kw["top_logprobs"]],
                }
                for i, ch in enumerate(text)
            ]
        return Generation(
            text=text,
            prompt_tokens=len(" ".join(m["content"] for m in messages)),
            completion_tokens=len(text),
            finish_reason="length" if len(text) == kw["max_tokens"] else "stop",
            logprobs=lps,
            prefix_hit_tokens=7 if kw["reuse"] else 0,
        )

    def candidates(
        self, messages: list[dict[str, str]], labels: list[str], reuse: bool
    ) -> Generation:
        self.calls.append(("candidates", messages, {"labels": labels, "reuse": reuse}))
        if self.fail is not None:
            raise self.fail
        return Generation(
            text=labels[0],
            prompt_tokens=11,
            completion_tokens=1,
            finish_reason="length",
            logprobs=[{"token": labels[0], "logprob": -0.25, "bytes": [], "top_logprobs": []}],
            candidate_logprobs={lab: (lab, -0.25 * (i + 1)) for i, lab in enumerate(labels)},
            prefix_hit_tokens=5 if reuse else 0,
        )


@pytest.fixture(autouse=True)
def _accounts() -> Iterator[None]:
    reset_accounts()
    yield
    reset_accounts()


def _gateway(tmp_path: Path, direct: bool, **params: Any) -> Gateway:
    gw = Gateway(
        LLMParams(
            cache=False,
            cache_dir=str(tmp_path / "cache"),
            metrics_dir=str(tmp_path / "m"),
            **params,
        ),
        stage=f"t_route_{direct}",
    )
    gw.local_direct = direct
    return gw


def _fake(monkeypatch: pytest.MonkeyPatch, fail: Exception | None = None) -> FakeLocalModel:
    fake = FakeLocalModel(fail)
    monkeypatch.setattr(local_provider, "get_model", lambda *_a, **_k: fake)
    return fake


REQUESTS = [
    ChatRequest.of(MODEL, "Answer briefly.", "What is the capital of France?", max_tokens=8),
    ChatRequest.of(MODEL, None, "Name a colour.", max_tokens=3, top_logprobs=2),
    ChatRequest.of(
        MODEL, "sys", "warm words", max_tokens=5, temperature=1.5, seed=7, stop=("x", "yz")
    ),
    ChatRequest.of(MODEL, None, "one stop", max_tokens=4, stop=("o",)),
    ChatRequest(
        model=MODEL,
        messages=(("system", "s"), ("user", "q"), ("assistant", ""), ("user", "One digit only.")),
        max_tokens=2,
    ),
]


def _comparable(gw: Gateway, results: list[Any]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    rows = [r.model_dump(exclude={"latency_s"}) for r in results]
    total = gw.account.as_dict()["total"]
    return rows, {k: v for k, v in total.items() if "latency" not in k and "time" not in k}


@pytest.mark.parametrize("reuse", [True, False])
def test_direct_route_equals_litellm_route_scripted_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reuse: bool
) -> None:
    seen: dict[bool, Any] = {}
    via_litellm: list[int] = []  # the handler's ModelResponse builder: litellm route only
    orig = local_provider._response

    def counted(name: str, g: Generation) -> ModelResponse:
        via_litellm.append(1)
        return orig(name, g)

    monkeypatch.setattr(local_provider, "_response", counted)
    for direct in (False, True):
        reset_accounts()
        via_litellm.clear()
        fake = _fake(monkeypatch)
        gw = _gateway(tmp_path, direct, prefix_reuse=reuse)
        chats = gw.chat(REQUESTS)
        dists = gw.next_token_probs(REQUESTS[:2], ["A", "B", "C"])
        structured = gw.structured([ChatRequest.of(MODEL, None, "Rate it.")], Score)
        repaired = gw.structured([ChatRequest.of(MODEL, None, "again")], Score)
        seen[direct] = (
            fake.calls,
            _comparable(gw, chats),
            [d.model_dump() for d in dists],
            [s.model_dump(exclude={"latency_s"}) for s in structured + repaired],
        )
        assert len(via_litellm) == (0 if direct else len(fake.calls))
    assert seen[True] == seen[False]
    calls, (rows, _total) = seen[True][0], seen[True][1]
    assert calls and all(
        c[2].get("has_deadline", True) for c in calls
    )  # the timeout reached the model
    assert rows[1]["logprobs"] and rows[1]["logprobs"][0]["top_logprobs"][1]["token"] == "?"
    assert rows[4]["prefix_hit_tokens"] == (7 if reuse else 0)


@pytest.mark.parametrize(
    "make",
    [
        lambda e: e.ContextWindowExceededError(
            message="prompt has 9000 tokens, context is 8192",
            model="smollm2-135m",
            llm_provider="local",
        ),
        lambda e: e.Timeout(
            message="local model exceeded its 3-token deadline",
            model="smollm2-135m",
            llm_provider="local",
        ),
        lambda e: e.BadRequestError(
            message="candidates ['a', 'ab'] share their first token; use distinct labels",
            model="smollm2-135m",
            llm_provider="local",
        ),
        lambda _e: ValueError("boom"),
        lambda _e: RuntimeError("llama_decode returned -1"),
        lambda _e: KeyError("x"),
    ],
)
def test_direct_route_error_texts_equal_litellm_route_scripted_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make: Any
) -> None:
    providers.configure_litellm()
    from litellm import exceptions

    out = {}
    for direct in (False, True):
        reset_accounts()
        _fake(monkeypatch, fail=make(exceptions))
        gw = _gateway(tmp_path, direct)
        [res] = gw.chat(REQUESTS[:1])
        [dist] = gw.next_token_probs(REQUESTS[:1], ["A", "B"])
        out[direct] = (
            res.model_dump(exclude={"latency_s"}),
            dist.model_dump(),
            _comparable(gw, [])[1],
        )
    assert out[True] == out[False]
    assert not out[True][0]["ok"] and out[True][0]["error"].endswith("(after 1 attempt)")
