"""Where a hosted model string is served, and the errors that mean "stop asking it".

:func:`route` resolves a model string to a :class:`Route`: the API base (``llm.endpoints``
longest-prefix entry, else the provider's ``<PROVIDER>_BASE_URL`` / ``<PROVIDER>_API_BASE``
environment variable, else the provider's default host), the environment variable that holds
its key, and the server-specific sampling fields. The gateway passes the base and key to
litellm explicitly, so the base in the reply-cache key is exactly the one called. Keys are
read from the environment at call time and are never part of a route's record.

:func:`fatal_reason` classifies a call error as fatal for every request of the route
(authentication, unknown model, connection refused, unknown host): the gateway then fails
the remaining requests at once, with one line naming the model, the host and what to set. A
redirect to another origin is fatal too: the guarded transport (:mod:`ragcourt.llm.http_guard`)
never follows it, so the key never leaves the API base's host.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ragcourt.core.bounded_http import RedirectRefused, UnsafeReply
from ragcourt.core.redact import host_of, redact_url
from ragcourt.llm import providers
from ragcourt.llm.params import LLMParams, SamplingValue


@dataclass(frozen=True)
class Route:
    """How one hosted model string is called (no secret values)."""

    model: str
    provider: str
    api_base: str | None  # None: the provider's default host
    base_from: str  # where the base came from: "llm.endpoints['…']", "$VAR", "provider default"
    key_env: str | None  # the environment variable holding the key (None: none needed/known)
    extra_body: dict[str, SamplingValue] = field(default_factory=dict)

    @property
    def host(self) -> str:
        return host_of(self.api_base)

    def record(self) -> dict[str, Any]:
        """What a run's metadata and the reply-cache key hold about this route."""
        return {
            "api_base": redact_url(self.api_base) if self.api_base else None,
            "base_from": self.base_from,
            "api_key_env": self.key_env,
            "extra_body": dict(sorted(self.extra_body.items())),
        }


def _env_base(provider: str, env: dict[str, str]) -> tuple[str | None, str]:
    up = provider.upper().replace("-", "_")
    for var in (f"{up}_BASE_URL", f"{up}_API_BASE"):
        if env.get(var):
            return env[var], f"${var}"
    return None, "provider default"


def _default_key_env(model: str, provider: str) -> str | None:
    """The key variable litellm expects for ``model`` (``OPENAI_API_KEY``), if it names one."""
    try:
        providers.configure_litellm()
        import litellm

        missing = litellm.validate_environment(model=model, api_key=None).get("missing_keys") or []
        named = [k for k in missing if k.endswith("_API_KEY")]
        if named:
            return str(named[0])
    except Exception:  # an unknown provider: fall back to the naming convention
        pass
    return f"{provider.upper().replace('-', '_')}_API_KEY" if provider else None


def route(model: str, params: LLMParams, env: dict[str, str] | None = None) -> Route:
    """The route of a hosted ``model`` under ``params`` (see the module doc)."""
    env = dict(os.environ) if env is None else env
    provider = providers.provider_of(model)
    found = params.endpoint(model)
    ep = found[1] if found else None
    base: str | None
    if ep is not None and ep.api_base:
        base, base_from = ep.api_base, f"llm.endpoints['{found[0] if found else ''}']"
    else:
        base, base_from = _env_base(provider, env)
    key_env = ep.api_key_env if ep is not None and ep.api_key_env else None
    if key_env is None:
        key_env = _default_key_env(model, provider)
    return Route(
        model=model,
        provider=provider,
        api_base=base,
        base_from=base_from,
        key_env=key_env,
        extra_body=dict(ep.extra_body) if ep is not None else {},
    )


def missing_key(r: Route, env: dict[str, str] | None = None) -> str | None:
    """One line when the route's key variable is unset, else None."""
    env = dict(os.environ) if env is None else env
    if r.key_env is None or env.get(r.key_env):
        return None
    return (
        f"{r.model} at {r.host}: no API key: set {r.key_env} (any value for a keyless local "
        f"server), or name another variable in llm.endpoints.<prefix>.api_key_env"
    )


def _chain(exc: BaseException) -> list[BaseException]:
    out: list[BaseException] = []
    cur: BaseException | None = exc
    while cur is not None and cur not in out and len(out) < 10:
        out.append(cur)
        cur = cur.__cause__ or cur.__context__
    return out


def _connect_fails(url: str, timeout_s: float = 2.0) -> tuple[bool, bool]:
    """(refused, unknown host) for a TCP connection to ``url``'s host and port; a timeout or
    any other error is neither (it may pass: the call is retried)."""
    parts = urlsplit(url)
    if not parts.hostname:
        return False, False
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((parts.hostname, port), timeout=timeout_s):
            return False, False
    except ConnectionRefusedError:
        return True, False
    except socket.gaierror as err:
        return False, err.errno == socket.EAI_NONAME
    except OSError:
        return False, False


def fatal_reason(exc: BaseException, r: Route, refused: Sequence[UnsafeReply] = ()) -> str | None:
    """One line when ``exc`` (with ``refused``: what the guarded transport refused during the
    call) means no request of this route can succeed, else None."""
    providers.configure_litellm()
    from litellm import exceptions as err

    text = " ".join(str(e) for e in _chain(exc)).lower()
    where = f"{r.model} at {r.host}"
    seen = [*refused, *_chain(exc)]
    redirect = next((e for e in seen if isinstance(e, RedirectRefused)), None)
    if redirect is not None:  # every call would be redirected the same way
        return (
            f"{where}: the server redirected to another origin ({redirect.target}); not "
            f"followed, so the key stays with {r.host}: point the API base ({r.base_from}) at "
            "the server that answers"
        )
    if isinstance(exc, err.AuthenticationError | err.PermissionDeniedError):
        env = f"check {r.key_env}" if r.key_env else "check the API key"
        return f"{where}: the key was refused ({type(exc).__name__}); {env}"
    if isinstance(exc, err.NotFoundError):
        return (
            f"{where}: unknown model or API path ({type(exc).__name__}); check the model "
            f"string and the API base ({r.base_from})"
        )
    # litellm wraps a refused connection as InternalServerError("Connection error."): the
    # cause chain (openai -> httpx -> ConnectionRefusedError) says what happened
    conn_refused = any(isinstance(e, ConnectionRefusedError) for e in _chain(exc)) or (
        "connection refused" in text or "connect call failed" in text
    )
    unknown_host = "name or service not known" in text or "nodename nor servname" in text
    if not (conn_refused or unknown_host) and "connection error" in text and r.api_base:
        # litellm may drop the cause of its "Connection error.": ask the host directly
        conn_refused, unknown_host = _connect_fails(r.api_base)
    if conn_refused or unknown_host:
        what = "connection refused" if conn_refused else "unknown host"
        var = f"${r.provider.upper()}_API_BASE" if r.provider else "the API base"
        return f"{where}: {what}; start the server or set the API base ({var} or llm.endpoints)"
    return None
