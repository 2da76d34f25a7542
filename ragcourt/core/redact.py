"""Secrets out of URLs before they reach a log line, an error or an artifact.

:func:`redact_url` drops the userinfo (``user:password@``) and masks the value of every
secret-looking query parameter (``api_key``, ``key``, ``token``, ``secret``, ``password``,
``sig``, ...); anything that is not a parseable URL comes back unchanged.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

MASK = "***"
_SECRET_PARAM = re.compile(
    r"(key|token|secret|passw|pwd|auth|sig|signature|credential|session)", re.IGNORECASE
)
_URL_IN_TEXT = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s'\"<>]+")


def redact_url(url: str) -> str:
    """``url`` without userinfo and with secret-looking query values masked."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if not parts.scheme or not parts.netloc:
        return url
    host = parts.netloc.rsplit("@", 1)[-1]
    netloc = f"{MASK}@{host}" if "@" in parts.netloc else host
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(k, MASK if _SECRET_PARAM.search(k) else v) for k, v in pairs], safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def redact_urls_in(text: str) -> str:
    """Every URL inside ``text`` passed through :func:`redact_url`."""
    return _URL_IN_TEXT.sub(lambda m: redact_url(m.group(0)), text)


def host_of(url: str | None) -> str:
    """``scheme://host[:port]`` of ``url`` (no path, no secrets), or ``the provider default``."""
    if not url:
        return "the provider's default API host"
    parts = urlsplit(redact_url(url))
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme else url
