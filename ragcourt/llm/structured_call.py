"""Structured replies: JSON parsed into a pydantic model, with bounded repair rounds.

JSON is asked for by ``response_format`` where the provider takes it (:func:`json_format`: a
schema for local models and hosted models that support response schemas, ``json_object``
where supported) and by prompt otherwise. A 400 to a request with ``response_format`` is
retried by prompt only; when that works, the model is asked by prompt from then on. A reply
that does not parse (:func:`ragcourt.llm.structured.parse_reply`) is sent back with the reason,
``parse_retries`` times; then the result is ``ok=False`` with the raw text.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass
from typing import Any, TypeVar, cast

from pydantic import BaseModel

from ragcourt.llm import providers, structured
from ragcourt.llm.accounting import StageAccount
from ragcourt.llm.call_errors import format_refused
from ragcourt.llm.replies import Call
from ragcourt.llm.types import ChatRequest, ChatResult, StructuredResult

log = logging.getLogger("ragcourt.llm")
M = TypeVar("M", bound=BaseModel)


def structured_type(model: type[M]) -> type[StructuredResult[M]]:
    """``StructuredResult[model]`` (pydantic then validates and dumps ``value`` as ``model``);
    spelled ``__class_getitem__`` because mypy rejects a variable inside ``[...]``."""
    return cast("type[StructuredResult[M]]", StructuredResult.__class_getitem__(model))


def json_format(req: ChatRequest, model: type[BaseModel] | None) -> dict[str, Any] | None:
    """The ``response_format`` to ask for JSON: a schema for local models (llama.cpp grammar)
    and hosted models that support response schemas, ``json_object`` where supported, else
    none (the prompt asks for JSON and the reply is parsed leniently)."""
    schema_fmt = (
        {
            "type": "json_schema",
            "json_schema": {"name": model.__name__, "schema": model.model_json_schema()},
        }
        if model is not None
        else None
    )
    if providers.is_in_process(req.model):
        return schema_fmt or {"type": "json_object"}
    providers.configure_litellm()
    import litellm

    try:
        if schema_fmt is not None and litellm.supports_response_schema(req.model):
            return schema_fmt
        supported = litellm.get_supported_openai_params(model=req.model) or []
    except Exception:  # unknown model string: ask by prompt only
        return None
    mentions_json = any("json" in c.lower() for _, c in req.messages)
    if "response_format" in supported and mentions_json:
        return {"type": "json_object"}
    return None


@dataclass
class _Spent:
    """Tokens and latency summed over a structured request's attempts (fields of its result)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0

    def add(self, r: ChatResult) -> None:
        self.prompt_tokens += r.prompt_tokens
        self.completion_tokens += r.completion_tokens
        self.latency_s += r.latency_s


async def structured_one(
    call: Call,
    req: ChatRequest,
    model: type[M],
    parse_retries: int,
    no_response_format: set[str],
    account: StageAccount,
) -> StructuredResult[M]:
    """One structured request (module doc). ``no_response_format`` holds the models asked by
    prompt only; a model whose provider refuses ``response_format`` is added to it."""
    fmt = None if req.model in no_response_format else json_format(req, model)
    result_type = structured_type(model)
    messages = list(req.messages)
    last: ChatResult | None = None
    error = ""
    spent = _Spent()

    def result(ok: bool, reply: ChatResult, n: int, **kw: Any) -> StructuredResult[M]:
        return result_type(
            ok=ok,
            raw=reply.text,
            model=req.model,
            cached=reply.cached,
            attempts=n,
            **asdict(spent),
            **kw,
        )

    for attempt in range(1, parse_retries + 2):
        this = req.model_copy(update={"messages": tuple(messages), "json_mode": fmt is not None})
        last = (await call(this, response_format=fmt)).result
        if not last.ok and fmt is not None and format_refused(last.error):
            # a 400 to a request with response_format: ask again by prompt only; when that
            # works the provider does not take it, so this model is asked by prompt from now
            plain = (
                await call(this.model_copy(update={"json_mode": False}), response_format=None)
            ).result
            if plain.ok:
                no_response_format.add(req.model)
                log.info("%s refused response_format: JSON by prompt and validation", req.model)
                fmt, last = None, plain
        spent.add(last)
        if not last.ok:
            return result(False, last, attempt, error=last.error)
        try:
            value = structured.parse_reply(last.text, model)
        except structured.ReplyParseError as err:
            error = str(err)
            messages += [
                ("assistant", last.text),
                ("user", structured.repair_message(error, model)),
            ]
            continue
        return result(True, last, attempt, value=value)
    account.record_parse_failure(req.model)
    assert last is not None
    n = parse_retries + 1
    how = "response_format and validation" if fmt is not None else "prompt and validation"
    why = f"{req.model}: reply not parsable after {n} attempts (JSON by {how}): {error}"
    return result(False, last, n, error=why)
