"""How a failed model call is described and whether it is retried.

:func:`describe` is the one-line error text of a result row (first line of the message, URLs
and secrets masked); :func:`retryable` is the retry rule: rate limits, timeouts, 5xx and
connection errors are retried, other 4xx are not, the in-process local model never is.
"""

from __future__ import annotations

import asyncio
import os
import re

from ragcourt.core.redact import redact_urls_in
from ragcourt.llm import providers

_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD)", re.IGNORECASE)


def scrub(text: str) -> str:
    """Mask secret-looking environment values and ``sk-...`` keys in an error message."""
    for name, value in os.environ.items():
        if _SECRET_NAME.search(name) and len(value) >= 8 and value in text:
            text = text.replace(value, "***")
    return re.sub(r"\bsk-[A-Za-z0-9_\-]{8,}", "sk-***", text)


def describe(exc: BaseException) -> str:
    """``Type: first line of the message`` (600 characters at most), URLs and secrets masked."""
    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return scrub(redact_urls_in(f"{type(exc).__name__}: {msg}"[:600]))


def retryable(exc: BaseException, model: str) -> bool:
    """Rate limits, timeouts, 5xx and connection errors are retried; 4xx are not.
    The in-process local model is deterministic, so its failures are never retried."""
    if providers.provider_of(model) == "local":
        return False
    providers.configure_litellm()
    from litellm import exceptions as err

    if isinstance(exc, err.BadRequestError | err.AuthenticationError):
        return False
    if isinstance(exc, err.NotFoundError | err.PermissionDeniedError):
        return False
    if isinstance(exc, err.Timeout | asyncio.TimeoutError | TimeoutError):
        return True
    if isinstance(
        exc,
        err.RateLimitError
        | err.APIConnectionError
        | err.InternalServerError
        | err.ServiceUnavailableError
        | err.BadGatewayError,
    ):
        return True
    return getattr(exc, "status_code", None) in {429, 500, 502, 503, 504}


def format_refused(error: str | None) -> bool:
    """A 400 (or litellm's unsupported-params error) to a request that carried
    ``response_format``: possibly the format refused, which a plain retry tells."""
    text = (error or "").lower()
    return "badrequest" in text or "unsupportedparams" in text
