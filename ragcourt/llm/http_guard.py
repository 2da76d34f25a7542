"""Every HTTP request litellm makes for a hosted model goes through ragcourt's guarded
transport (:mod:`ragcourt.core.bounded_http`): no redirect to another origin is followed (so no
``Authorization``, ``x-api-key``, ``api-key``, ``x-goog-api-key`` ... header reaches another
host), only bounded content-encodings are accepted, and the decoded reply body is capped at
``llm.reply_max_bytes`` while it streams.

litellm builds its HTTP clients in two places, and both take their transport from
``AsyncHTTPHandler.create_async_transport``: its own handler (anthropic, gemini, ollama, ...)
and the openai SDK clients it builds (openai, azure, OpenAI-compatible providers). :func:`install`
wraps that factory (and the sync ones: ``HTTPHandler._create_sync_transport`` and
``litellm.client_session``) once per process, and drops the clients litellm cached before.
"""

from __future__ import annotations

import os
import threading
from typing import Any

import httpx

from ragcourt.core.bounded_http import GuardedSyncTransport, GuardedTransport

_LOCK = threading.Lock()
_installed = False


def installed() -> bool:
    return _installed


def install() -> None:
    """Route litellm's HTTP clients through the guarded transports (idempotent)."""
    global _installed
    with _LOCK:
        if _installed:
            return
        import litellm
        from litellm.llms.custom_httpx import http_handler as hh

        make_async = hh.AsyncHTTPHandler.create_async_transport
        make_sync = hh.HTTPHandler._create_sync_transport

        def guarded_async(
            ssl_context: Any = None, ssl_verify: bool | None = None, shared_session: Any = None
        ) -> GuardedTransport:
            inner = make_async(
                ssl_context=ssl_context, ssl_verify=ssl_verify, shared_session=shared_session
            )
            if inner is None:  # litellm's "httpx default": build it with the same TLS settings
                verify = ssl_context if ssl_context is not None else ssl_verify is not False
                inner = httpx.AsyncHTTPTransport(
                    verify=verify, cert=os.getenv("SSL_CERTIFICATE", litellm.ssl_certificate)
                )
            return GuardedTransport(inner)

        def guarded_sync(self: Any) -> GuardedSyncTransport:
            inner = make_sync(self)
            if inner is None:
                inner = httpx.HTTPTransport(
                    verify=hh.get_ssl_configuration(self.ssl_verify),
                    cert=os.getenv("SSL_CERTIFICATE", litellm.ssl_certificate),
                )
            return GuardedSyncTransport(inner)

        hh.AsyncHTTPHandler.create_async_transport = staticmethod(guarded_async)  # type: ignore[assignment]
        hh.AsyncHTTPHandler._create_async_transport = staticmethod(guarded_async)  # type: ignore[assignment]
        hh.HTTPHandler._create_sync_transport = guarded_sync  # type: ignore[method-assign,assignment]
        if litellm.client_session is None:  # the openai SDK's sync clients
            litellm.client_session = httpx.Client(
                transport=GuardedSyncTransport(httpx.HTTPTransport()), follow_redirects=False
            )
        cache = getattr(litellm, "in_memory_llm_clients_cache", None)
        if cache is not None and hasattr(cache, "flush_cache"):
            cache.flush_cache()  # clients built before the guard was in place
        _installed = True
