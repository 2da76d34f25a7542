"""The ``llm`` section of ``params.yaml``: gateway settings shared by every stage that calls a
model."""

from __future__ import annotations

import re
from typing import Annotated, Protocol

from pydantic import (
    AfterValidator,
    Field,
    StrictBool,
    StrictInt,
)

from ragcourt.core.catalog import (
    DEFAULT_METRICS_DIR,
    DEFAULT_MODELS_FILE,
)
from ragcourt.core.params import (
    RUNTIME,
    CoreView,
    DelayS,
    NonEmptyStr,
    Strict,
    TimeoutS,
)

_ENV_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


SamplingValue = StrictBool | StrictInt | float | str


def _env_name(value: str | None) -> str | None:
    if value is not None and not _ENV_NAME_RE.fullmatch(value):
        raise ValueError(f"'{value}' is not an environment variable name ([A-Za-z_][A-Za-z0-9_]*)")
    return value


def _http_base(value: str | None) -> str | None:
    if value is not None and not re.match(r"https?://[^\s/]+", value):
        raise ValueError("must be an http(s) URL, e.g. http://127.0.0.1:8000/v1")
    return value


class EndpointParams(Strict):
    """Where the hosted models whose string starts with this entry's key are served.

    ``api_base``: the API URL (else the provider's ``<PROVIDER>_BASE_URL`` /
    ``<PROVIDER>_API_BASE`` environment variable, else the provider's default host);
    ``api_key_env``: the environment variable holding the key (its value is never stored);
    ``extra_body``: server-specific sampling fields sent on every call (a llama.cpp server:
    ``{repeat_penalty: 1.0}``, whose default is 1.1).
    """

    api_base: Annotated[str | None, AfterValidator(_http_base)] = None
    api_key_env: Annotated[str | None, AfterValidator(_env_name)] = None
    extra_body: dict[str, SamplingValue] = Field(default_factory=dict)


class LLMParams(Strict):
    """Gateway settings shared by every stage that calls a model.

    ``endpoints`` maps model-string prefixes (longest match) to where they are served, so the
    judge can run on one server and the answerer on another (``openai/judge-`` and
    ``openai/answer-`` entries). ``top_p`` joins ``temperature`` and ``seed`` as sampling
    params sent explicitly on every hosted call (the run records them).
    """

    model: NonEmptyStr = "local/smollm2-135m"
    models_file: NonEmptyStr = DEFAULT_MODELS_FILE
    cache_dir: NonEmptyStr = Field(default=".ragcourt/cache", json_schema_extra=RUNTIME)
    cache: StrictBool = Field(default=True, json_schema_extra=RUNTIME)
    concurrency: StrictInt = Field(default=8, gt=0, le=10_000, json_schema_extra=RUNTIME)
    concurrency_per_model: dict[str, Annotated[StrictInt, Field(ge=1, le=10_000)]] = Field(
        default_factory=lambda: {"local/": 1}, json_schema_extra=RUNTIME
    )
    timeout_s: TimeoutS = Field(default=120.0, json_schema_extra=RUNTIME)
    # a hosted reply body past this many decoded bytes is refused while it streams (one line)
    reply_max_bytes: StrictInt = Field(
        default=10_000_000, ge=10_000, le=1_000_000_000, json_schema_extra=RUNTIME
    )
    max_retries: StrictInt = Field(default=3, ge=0, le=100, json_schema_extra=RUNTIME)
    parse_retries: StrictInt = Field(default=2, ge=0, le=100)
    # delay before retry n: base * 2**(n-1)
    retry_backoff_s: DelayS = Field(default=1.0, json_schema_extra=RUNTIME)
    retry_backoff_max_s: DelayS = Field(default=30.0, json_schema_extra=RUNTIME)
    next_token_top_logprobs: StrictInt = Field(default=20, ge=1, le=20)  # hosted next_token_probs
    # local models: reuse the KV state of the prompt prefix shared with the previous call (same
    # replies; off only to measure or to rule it out)
    prefix_reuse: StrictBool = Field(default=True, json_schema_extra=RUNTIME)
    temperature: float = Field(default=0.0, ge=0, le=10)
    top_p: float = Field(default=1.0, gt=0, le=1)
    seed: StrictInt = 0
    metrics_dir: NonEmptyStr = DEFAULT_METRICS_DIR
    endpoints: dict[NonEmptyStr, EndpointParams] = Field(default_factory=dict)

    def resolve(self, role_model: str | None) -> str:
        """The model for a role: the role's own string, else the global ``model``."""
        return role_model or self.model

    def endpoint(self, model: str) -> tuple[str, EndpointParams] | None:
        """(key, entry) of ``endpoints`` whose key is the longest prefix of ``model``."""
        keys = [k for k in self.endpoints if model.startswith(k)]
        if not keys:
            return None
        key = max(keys, key=len)
        return key, self.endpoints[key]


class LLMView(CoreView, Protocol):
    """The params the ``llm`` layer reads: the shared ones and ``llm``."""

    llm: LLMParams
