"""``kind: http``: one HTTP request per question to the user's RAG service (``httpx``, async).

**Request**: ``method`` to ``url`` with the ``body`` template as JSON (POST/PUT) and the
``params`` template as the query string. Every string value of the templates has
``{question}`` / ``{question_id}`` replaced by the text (:func:`fill`): the JSON is built from
values, so quotes, backslashes or braces in a question can never break or inject into it.
Headers come from :func:`~ragcourt.answering.external.secrets.resolve_headers`; redirects are
not followed.

**Reply**: JSON; the answer is the string at ``answer_path`` (dotted: keys and list indices,
``choices.0.message.content``); with ``contexts_path``, the list there holds the passages
(strings or objects, see :mod:`~ragcourt.answering.external.replies`; ``context_fields`` maps
the fields of each object by dotted path). A ``null`` contexts value means none supplied.

**Limits** (params ``limits``): the body is read while it streams and cut off past
``http_reply_max_bytes`` (an error row, not retried); the answer and passages are bounded by
:func:`~ragcourt.answering.external.bounds.bound_reply`; JSON nested deeper than
:data:`~ragcourt.core.user_json.MAX_JSON_DEPTH` is an error row.

**Failures** become error rows: HTTP 429 and 5xx, timeouts and connection errors are retried
with exponential backoff (``max_retries``, ``backoff_s``; ``Retry-After`` honoured up to
``backoff_max_s``); other 4xx, a non-JSON reply or a reply without the answer are not.
Error messages quote at most 200 characters of the reply body, and every secret header value
is scrubbed from them (and from answers and contexts) before anything is written or logged.

**openai_chat** shortcut: POST ``<base_url>/chat/completions`` with ``{"model", "messages":
[system?, {"role": "user", "content": "{question}"}], "temperature", "max_tokens"?}``, answer at
``choices.0.message.content``, ``api_key_env`` sent as ``Authorization: Bearer ...``.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import httpx
import polars as pl

from ragcourt.answering.external.ask import Asker, ask_every_question
from ragcourt.answering.external.bounds import bound_reply
from ragcourt.answering.external.calls import CallFailed, CallPolicy, describe_exception
from ragcourt.answering.external.replies import Reply, ReplyError, passages_from
from ragcourt.answering.external.routes import ANSWER_ROUTES, AnswerRoute
from ragcourt.answering.external.secrets import resolve_headers
from ragcourt.answering.external.specs import PLACEHOLDER_RE, ContextFields, HttpSpec
from ragcourt.core.bounded_http import (
    ACCEPT_ENCODING,
    BodyTooLarge,
    ReplyBound,
    UnsafeReply,
    aread_bounded,
)
from ragcourt.core.params import LimitsParams
from ragcourt.core.user_json import JsonTooDeep, loads_user_json

OPENAI_ANSWER_PATH = "choices.0.message.content"
BODY_SNIPPET = 200
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class RequestPlan:
    """The effective request of an HTTP system (the ``openai_chat`` shortcut expanded)."""

    method: str
    url: str
    body: Any
    params: dict[str, str]
    headers: dict[str, str]
    headers_env: dict[str, str]
    answer_path: str
    contexts_path: str | None = None
    context_fields: ContextFields | None = None


def request_plan(spec: HttpSpec) -> RequestPlan:
    """The request to send for ``spec`` (templates still holding the placeholders)."""
    if spec.openai_chat is not None:
        o = spec.openai_chat
        messages = [{"role": "system", "content": o.system_prompt}] if o.system_prompt else []
        messages.append({"role": "user", "content": "{question}"})
        body: dict[str, Any] = {"model": o.model, "messages": messages}
        body["temperature"] = o.temperature
        if o.max_tokens is not None:
            body["max_tokens"] = o.max_tokens
        headers = dict(spec.headers)
        if o.api_key_env is not None:
            headers["Authorization"] = f"Bearer ${{env:{o.api_key_env}}}"
        return RequestPlan(
            "POST",
            o.base_url.rstrip("/") + "/chat/completions",
            body,
            {},
            headers,
            dict(spec.headers_env),
            OPENAI_ANSWER_PATH,
        )
    assert spec.url is not None and spec.answer_path is not None  # checked by HttpSpec
    return RequestPlan(
        spec.method,
        spec.url,
        spec.body,
        dict(spec.params),
        dict(spec.headers),
        dict(spec.headers_env),
        spec.answer_path,
        spec.contexts_path,
        spec.context_fields,
    )


def fill(template: Any, values: Mapping[str, str]) -> Any:
    """``template`` with ``{question}`` / ``{question_id}`` replaced inside every string value
    (mapping keys untouched; other braces kept as written). One pass, so a question that
    itself contains ``{question_id}`` stays as it is."""
    if isinstance(template, str):
        return PLACEHOLDER_RE.sub(lambda m: values[m.group(1)], template)
    if isinstance(template, dict):
        return {k: fill(v, values) for k, v in template.items()}
    if isinstance(template, list):
        return [fill(v, values) for v in template]
    return template


_MISSING = object()


def json_at(data: Any, path: str) -> Any:
    """The value at dotted ``path`` in parsed JSON (ReplyError naming the missing segment)."""
    cur = data
    for i, seg in enumerate(path.split(".")):
        nxt: Any = _MISSING
        if isinstance(cur, Mapping):
            nxt = cur.get(seg, _MISSING)
        elif isinstance(cur, list) and seg.isdigit() and int(seg) < len(cur):
            nxt = cur[int(seg)]
        if nxt is _MISSING:
            at = ".".join(path.split(".")[:i]) or "<root>"
            raise ReplyError(f"reply has no '{path}' (no '{seg}' under {at})")
        cur = nxt
    return cur


def _contexts(data: Any, plan: RequestPlan) -> Any:
    if plan.contexts_path is None:
        return None
    items = json_at(data, plan.contexts_path)
    f = plan.context_fields
    if f is None or items is None:
        return items
    if not isinstance(items, list):
        raise ReplyError(f"'{plan.contexts_path}' must be a list, got {type(items).__name__}")
    mapped = []
    for item in items:
        out = {"text": json_at(item, f.text)}
        for key in ("doc_id", "score", "char_start", "char_end"):
            sub = getattr(f, key)
            if sub is not None:
                out[key] = json_at(item, sub)
        mapped.append(out)
    return mapped


def parse_reply(data: Any, plan: RequestPlan) -> Reply:
    """The answer and contexts of a parsed JSON reply (ReplyError when they are not there)."""
    answer = json_at(data, plan.answer_path)
    if not isinstance(answer, str):
        raise ReplyError(f"'{plan.answer_path}' must be a string, got {type(answer).__name__}")
    return Reply(answer=answer, contexts=passages_from(_contexts(data, plan), "contexts"))


def _retry_after(resp: httpx.Response) -> float:
    value = resp.headers.get("retry-after", "")
    try:
        return max(0.0, float(value))
    except ValueError:
        return 0.0


def _snippet(body: bytes, encoding: str | None) -> str:
    text = _SPACES.sub(" ", body[: BODY_SNIPPET * 4].decode(encoding or "utf-8", "replace"))
    text = text.strip()
    return text[:BODY_SNIPPET] + ("…" if len(text) > BODY_SNIPPET else "")


async def read_capped(resp: httpx.Response, max_bytes: int) -> tuple[bytes, bool]:
    """(the decoded body, False), or (b"", True) when it passes ``max_bytes``: read through the
    bounded reader (:func:`ragcourt.core.bounded_http.aread_bounded`), which counts decoded
    bytes while it decodes (a gzip bomb stops at the bound) and never reads the rest; an
    encoding it cannot bound (zstd, br, stacked) raises
    :class:`~ragcourt.core.bounded_http.UnsupportedEncoding` before any byte is read."""
    try:
        return await aread_bounded(
            resp, ReplyBound(max_bytes, "limits.http_reply_max_bytes")
        ), False
    except BodyTooLarge:
        return b"", True


async def ask_once(
    client: httpx.AsyncClient,
    plan: RequestPlan,
    headers: Mapping[str, str],
    item: tuple[str, str],
    scrub: Callable[[str], str],
    limits: LimitsParams | None = None,
) -> Reply:
    """One attempt for one question; raises :class:`CallFailed` with a scrubbed message. The
    body is read while it streams, at most ``limits.http_reply_max_bytes``; the reply is then
    bounded by :func:`~.bounds.bound_reply`."""
    bounds = limits or LimitsParams()
    qid, question = item
    values = {"question": question, "question_id": qid}
    kwargs: dict[str, Any] = {}
    if plan.body is not None:
        kwargs["json"] = fill(plan.body, values)
    if plan.params:
        kwargs["params"] = fill(plan.params, values)
    where = f"{plan.method} {plan.url}"
    cap = bounds.http_reply_max_bytes
    try:
        # only the encodings the bounded reader decodes are advertised, whatever the spec says
        sent = {k: v for k, v in headers.items() if k.lower() != "accept-encoding"}
        sent["Accept-Encoding"] = ACCEPT_ENCODING
        request = client.build_request(plan.method, plan.url, headers=sent, **kwargs)
        resp = await client.send(request, stream=True)
        try:
            body, over = await read_capped(resp, cap)
        finally:
            await resp.aclose()
    except UnsafeReply as err:  # an encoding that cannot be bounded: the same on a retry
        raise CallFailed(scrub(str(err)), retryable=False) from None
    except httpx.TimeoutException as err:
        raise CallFailed(scrub(f"{where}: timed out ({type(err).__name__})")) from None
    except httpx.HTTPError as err:
        raise CallFailed(scrub(f"{where}: {describe_exception(err)}")) from None
    if resp.status_code >= 400:
        retryable = resp.status_code == 429 or resp.status_code >= 500
        raise CallFailed(
            scrub(f"HTTP {resp.status_code} from {where}: {_snippet(body, resp.encoding)}"),
            retryable=retryable,
            retry_after_s=_retry_after(resp) if retryable else 0.0,
        )
    if over:
        raise CallFailed(
            scrub(
                f"reply of {where} is over limits.http_reply_max_bytes ({cap:,} bytes); "
                "cut off unread"
            ),
            retryable=False,
        )
    try:
        data = loads_user_json(body)
    except JsonTooDeep as err:
        raise CallFailed(scrub(f"reply of {where}: {err}"), retryable=False) from None
    except ValueError:
        raise CallFailed(
            scrub(f"reply of {where} is not JSON: {_snippet(body, resp.encoding)}"),
            retryable=False,
        ) from None
    try:
        return bound_reply(parse_reply(data, plan), bounds)
    except ReplyError as err:
        raise CallFailed(scrub(f"{where}: {err}"), retryable=False) from None


def answer_over_http(
    name: str,
    model: str,
    spec: HttpSpec,
    qa: pl.DataFrame,
    previous: pl.DataFrame | None = None,
    env: Mapping[str, str] | None = None,
    limits: LimitsParams | None = None,
) -> pl.DataFrame:
    """Rows of table ``answers`` for an HTTP system (headers resolved before any request)."""
    plan = request_plan(spec)
    sent, scrub = resolve_headers(plan.headers, plan.headers_env, f"system '{name}'", env)
    if not any(h.lower() == "user-agent" for h in sent):
        sent["User-Agent"] = "ragcourt"
    policy = CallPolicy(
        spec.concurrency, spec.timeout_s, spec.max_retries, spec.backoff_s, spec.backoff_max_s
    )

    async def make() -> tuple[Asker, Callable[[], Awaitable[None]]]:
        client = httpx.AsyncClient(
            timeout=spec.timeout_s,
            follow_redirects=False,
            limits=httpx.Limits(max_connections=spec.concurrency),
        )

        async def ask(item: tuple[str, str]) -> Reply:
            return await ask_once(client, plan, sent, item, scrub, limits)

        return ask, client.aclose

    return ask_every_question(name, model, qa, make, policy, previous, scrub)


def _http_answer(
    name: str,
    model: str,
    spec: HttpSpec,
    qa: pl.DataFrame,
    previous: pl.DataFrame | None,
    limits: LimitsParams,
) -> pl.DataFrame:
    return answer_over_http(name, model, spec, qa, previous, limits=limits)


ANSWER_ROUTES.register("http")(AnswerRoute(_http_answer, lambda spec: f"{spec.method} {spec.url}"))
ANSWER_ROUTES.register("openai_chat")(
    AnswerRoute(
        _http_answer,
        lambda spec: f"{spec.openai_chat.base_url} (openai_chat, {spec.openai_chat.model})",
    )
)
