"""The systems-file syntax of external candidate systems (validated like built-in ones).

An entry with ``kind: answers_file``, ``kind: python`` or ``kind: http`` is a system ragcourt
does not build: it answers the QA questions itself and ragcourt only evaluates it. Unknown
keys are errors, as for built-in systems; ``defaults`` of the systems file apply to built-in
systems only (an external entry is complete as written). Paths are relative to the project
root (the folder the stages run in).

Secrets never live in this file: an HTTP header names an environment variable, either inline
(``Authorization: "Bearer ${env:MY_KEY}"``) or with ``headers_env: {Authorization: MY_KEY}``
(the header is the variable's value). ``${env:...}`` is accepted in header values only, and
credential headers (:data:`CREDENTIAL_HEADERS`) must use it, so a key can neither be written
into the config (hashed, shown by ``ragcourt systems list``) nor travel in a URL (logged).
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from ragcourt.answering.names import NamedSpec
from ragcourt.core.fixed_model import HandWrittenModel
from ragcourt.core.params import DelayS, TimeoutS
from ragcourt.core.user_json import loads_user_json

KINDS_EXTERNAL = ("answers_file", "python", "http")
ANSWERS_FILE_SUFFIXES = (".parquet", ".jsonl", ".csv")
PLACEHOLDER_RE = re.compile(r"\{(question_id|question)\}")
ENV_REF_RE = re.compile(r"\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}")
ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
CALLABLE_RE = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*$")
HEADER_NAME_RE = re.compile(r"^[A-Za-z0-9!#$%&'*+.^_`|~-]+$")
CREDENTIAL_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "x-api-key", "api-key", "cookie"}
)
PATH_SEGMENT_RE = re.compile(r"^[^.\s]+$")


def check_json_path(value: str | None) -> str | None:
    """A dotted path into a JSON reply: keys and list indices separated by dots
    (``choices.0.message.content``); empty segments are an error."""
    if value is None:
        return None
    segments = value.split(".")
    if not value or not all(PATH_SEGMENT_RE.match(s) for s in segments):
        raise ValueError(f"'{value}' is not a dotted path like 'choices.0.message.content'")
    return value


def _leaves(value: Any) -> list[str]:
    """Every string leaf of a JSON-able value (keys excluded)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _leaves(v)]
    if isinstance(value, list):
        return [s for v in value for s in _leaves(v)]
    return []


def _check_header_name(name: str) -> None:
    """ValueError unless ``name`` is a valid HTTP header name (:data:`HEADER_NAME_RE`)."""
    if not HEADER_NAME_RE.match(name):
        raise ValueError(f"'{name}' is not a valid header name")


def _check_header_text(name: str, text: str) -> None:
    """A ``headers`` value: a credential header's names an environment variable, and every
    ``${...}`` in it is an ``${env:NAME}`` reference."""
    if name.lower() in CREDENTIAL_HEADERS and not ENV_REF_RE.search(text):
        raise ValueError(
            f"header '{name}' holds a literal value; name an environment variable "
            '(e.g. "Bearer ${env:MY_KEY}" or headers_env) so the secret stays out of '
            "the config and every artifact"
        )
    if "${" in ENV_REF_RE.sub("", text):
        raise ValueError(f"header '{name}': only ${{env:NAME}} references are supported")


def _check_header_env(name: str, var: str) -> None:
    """A ``headers_env`` value: the name of an environment variable."""
    if not ENV_NAME_RE.match(var):
        raise ValueError(f"header '{name}': '{var}' is not an environment variable name")


#: the check of a header's value, by the field that holds the header
_HEADER_VALUE_CHECKS = {"headers": _check_header_text, "headers_env": _check_header_env}


class AnswersFileSpec(NamedSpec):
    """``kind: answers_file``: answers another process already wrote (see
    :mod:`ragcourt.answering.external.answers_file` for the columns)."""

    kind: Literal["answers_file"]
    path: str

    @property
    def route(self) -> str:
        """Its key in :data:`~ragcourt.answering.external.routes.ANSWER_ROUTES`."""
        return "answers_file"

    @field_validator("path")
    @classmethod
    def _suffix(cls, value: str) -> str:
        if not value.lower().endswith(ANSWERS_FILE_SUFFIXES):
            raise ValueError(f"'{value}' must end in one of {', '.join(ANSWERS_FILE_SUFFIXES)}")
        return value


class PythonSpec(NamedSpec):
    """``kind: python``: ``callable: package.module:attr`` (see
    :mod:`ragcourt.answering.external.python_callable` for the call and return contract).

    ``init``: keyword arguments when ``attr`` is a class (instantiated once per run).
    ``inputs``: extra files or folders the callable reads (its helper modules, an index);
    their sha256 joins the freshness hash, and the plan lists them as dependencies.
    ``isolation``: ``process`` (default) runs the callable in worker processes, so
    ``sys.exit``, ``os._exit``, a crash or a hang costs only the questions in flight;
    ``in_process_unsafe`` calls it in the stage's own process (faster, and unsafe: a crash
    takes the stage down). ``start_timeout_s`` bounds a worker's import and ``init``.
    """

    kind: Literal["python"]
    callable: str

    @property
    def route(self) -> str:
        """Its key in :data:`~ragcourt.answering.external.routes.ANSWER_ROUTES`."""
        return "python"

    init: dict[str, Any] = Field(default_factory=dict)
    inputs: list[str] = Field(default_factory=list)
    isolation: Literal["process", "in_process_unsafe"] = "process"
    concurrency: int = Field(default=4, ge=1, le=256)
    timeout_s: TimeoutS = 120.0
    start_timeout_s: TimeoutS = 300.0
    max_retries: int = Field(default=0, ge=0, le=10)
    backoff_s: DelayS = 1.0

    @field_validator("callable")
    @classmethod
    def _target(cls, value: str) -> str:
        if not CALLABLE_RE.match(value):
            raise ValueError(f"'{value}' must be 'package.module:function' (or ':Class')")
        return value

    @property
    def module(self) -> str:
        return self.callable.partition(":")[0]

    @property
    def attr(self) -> str:
        return self.callable.partition(":")[2]


class ContextFields(HandWrittenModel):
    """Dotted paths, inside each item of the contexts list of an HTTP reply, to the passage
    fields (without it an item is a string or an object with the standard passage keys)."""

    text: str
    doc_id: str | None = None
    score: str | None = None
    char_start: str | None = None
    char_end: str | None = None

    @field_validator("*")
    @classmethod
    def _paths(cls, value: str | None) -> str | None:
        return check_json_path(value)


class OpenAIChat(HandWrittenModel):
    """Shortcut for an OpenAI-compatible chat endpoint: POST ``<base_url>/chat/completions``
    with the question as the user message; the answer is ``choices.0.message.content``."""

    base_url: str
    model: str
    api_key_env: str | None = None  # sent as "Authorization: Bearer <value>"
    system_prompt: str | None = None
    max_tokens: int | None = Field(default=None, gt=0)
    temperature: float = 0.0

    @field_validator("base_url")
    @classmethod
    def _url(cls, value: str) -> str:
        return _check_url(value)

    @field_validator("api_key_env")
    @classmethod
    def _env(cls, value: str | None) -> str | None:
        if value is not None and not ENV_NAME_RE.match(value):
            raise ValueError(f"'{value}' is not an environment variable name")
        return value


def _check_url(value: str) -> str:
    if not re.match(r"^https?://[^\s/]+", value):
        raise ValueError(f"'{value}' must be an http:// or https:// URL")
    if "${" in value:
        raise ValueError("${env:...} is allowed in header values only (URLs are logged)")
    return value


class HttpSpec(NamedSpec):
    """``kind: http``: one request per question (see
    :mod:`ragcourt.answering.external.http_endpoint`).

    Either ``url`` (+ ``method``, ``body`` and/or ``params`` templates, ``answer_path``,
    optional ``contexts_path`` and ``context_fields``) or the ``openai_chat`` shortcut.
    Templates: every string value in ``body`` / ``params`` may hold ``{question}`` and
    ``{question_id}``; ``body`` may be a mapping/list or a JSON text. Substitution is
    structural (the JSON is built from values, never by pasting text into JSON).
    """

    kind: Literal["http"]
    url: str | None = None
    method: Literal["GET", "POST", "PUT"] = "POST"
    body: Any = None
    params: dict[str, str] = Field(default_factory=dict)
    answer_path: str | None = None
    contexts_path: str | None = None
    context_fields: ContextFields | None = None
    openai_chat: OpenAIChat | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    headers_env: dict[str, str] = Field(default_factory=dict)
    concurrency: int = Field(default=4, ge=1, le=256)
    timeout_s: TimeoutS = 60.0
    max_retries: int = Field(default=2, ge=0, le=10)
    backoff_s: DelayS = 0.5
    backoff_max_s: DelayS = 30.0

    @property
    def route(self) -> str:
        """Its key in :data:`~ragcourt.answering.external.routes.ANSWER_ROUTES`."""
        return "http" if self.openai_chat is None else "openai_chat"

    @field_validator("url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        return None if value is None else _check_url(value)

    @field_validator("answer_path", "contexts_path")
    @classmethod
    def _paths(cls, value: str | None) -> str | None:
        return check_json_path(value)

    @field_validator("body", mode="before")
    @classmethod
    def _body_json(cls, value: Any) -> Any:
        """A JSON text body is parsed here, so a malformed template fails at load time."""
        if isinstance(value, str):
            try:
                return loads_user_json(value)
            except ValueError as err:
                raise ValueError(f"body is not valid JSON ({err})") from None
        return value

    @field_validator("headers", "headers_env")
    @classmethod
    def _headers(cls, value: dict[str, str], info: ValidationInfo) -> dict[str, str]:
        """Each header: a valid name, and a value as its field takes it (header by header)."""
        check_value = _HEADER_VALUE_CHECKS[str(info.field_name)]
        for name, text in value.items():
            _check_header_name(name)
            check_value(name, text)
        return value

    @model_validator(mode="after")
    def _shape(self) -> HttpSpec:
        custom = {
            "url": self.url,
            "body": self.body,
            "answer_path": self.answer_path,
            "contexts_path": self.contexts_path,
            "context_fields": self.context_fields,
        }
        if self.openai_chat is not None:
            given = [k for k, v in custom.items() if v is not None]
            if self.params:
                given.append("params")
            if given:
                raise ValueError(f"openai_chat replaces {given}: give one or the other")
            return self
        if self.url is None or self.answer_path is None:
            raise ValueError("needs 'url' and 'answer_path' (or the 'openai_chat' shortcut)")
        if self.method == "GET" and self.body is not None:
            raise ValueError("a GET request has no body; put the question in 'params'")
        if self.context_fields is not None and self.contexts_path is None:
            raise ValueError("'context_fields' needs 'contexts_path'")
        texts = _leaves(self.body) + list(self.params.values())
        if not any("{question}" in t for t in texts):
            raise ValueError("no '{question}' placeholder in 'body' or 'params'")
        for t in texts:
            if ENV_REF_RE.search(t) or "${" in t:
                raise ValueError("${env:...} is allowed in header values only")
        overlap = {h.lower() for h in self.headers} & {h.lower() for h in self.headers_env}
        if overlap:
            raise ValueError(f"header(s) {sorted(overlap)} set in both headers and headers_env")
        return self


ExternalSpec = AnswersFileSpec | PythonSpec | HttpSpec
"""The spec of any external system (``kind`` tells which)."""
