"""Secrets out of URLs before they reach a log line, an error or an artifact.

:func:`redact_url` replaces the userinfo (``user:password@``) by ``***@`` and masks the value
of every secret-looking parameter (``api_key``, ``key``, ``token``, ``secret``, ``password``,
``sig``, ...) of the query and of the fragment (``#access_token=...``), with ``&`` or ``;``
between parameters and the names matched after percent-decoding; it works on the text, so a
URL that does not parse (a bad IPv6 host, a space in the password) is masked too, and anything
that is not a ``scheme://`` URL comes back unchanged.

:func:`install_log_redaction` makes every log record of the process go through
:func:`redact_urls_in` when it is created (message, arguments and traceback text, whatever
handler prints it: stderr, pytest's caplog, Prefect) and sets the ``httpx`` / ``httpcore``
loggers, which log every request URL at INFO, to WARNING unless a level was set for them.
"""

from __future__ import annotations

import logging
import re
import threading
from urllib.parse import unquote

MASK = "***"
_SECRET_PARAM = re.compile(
    r"(key|token|secret|pass|pwd|auth|sig|credential|session|jwt|bearer|cookie|otp|"
    r"private|^pw$|^code$)",
    re.IGNORECASE,
)
_URL_IN_TEXT = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s'\"<>]+")
_URL = re.compile(
    r"^(?P<scheme>[a-zA-Z][a-zA-Z0-9+.\-]*://)(?P<authority>[^/?#]*)(?P<path>[^?#]*)"
    r"(?:\?(?P<query>[^#]*))?(?:#(?P<fragment>.*))?$",
    re.DOTALL,
)
_PARAM_SEP = re.compile(r"([&;])")
#: loggers that write a request's full URL at INFO
NOISY_LOGGERS = ("httpx", "httpcore")


def _mask_params(text: str) -> str:
    """``name=value`` pairs (``&`` / ``;`` separated) with secret-looking names' values masked."""
    out = []
    for part in _PARAM_SEP.split(text):
        name, eq, _ = part.partition("=")
        if eq and _SECRET_PARAM.search(unquote(name.replace("+", " "))):
            part = f"{name}={MASK}"
        out.append(part)
    return "".join(out)


def redact_url(url: str) -> str:
    """``url`` with its userinfo replaced by ``***`` and secret-looking parameter values masked."""
    m = _URL.match(url)
    if m is None:
        return url
    authority = m["authority"]
    if "@" in authority:
        authority = f"{MASK}@{authority.rsplit('@', 1)[-1]}"
    out = m["scheme"] + authority + m["path"]
    if m["query"] is not None:
        out += "?" + _mask_params(m["query"])
    if m["fragment"] is not None:
        out += "#" + _mask_params(m["fragment"])
    return out


def redact_urls_in(text: str) -> str:
    """Every URL inside ``text`` passed through :func:`redact_url`."""
    return _URL_IN_TEXT.sub(lambda m: redact_url(m.group(0)), text)


def host_of(url: str | None) -> str:
    """``scheme://host[:port]`` of ``url`` (no path, no secrets), or ``the provider default``."""
    if not url:
        return "the provider's default API host"
    m = _URL.match(redact_url(url))
    if m is None:
        return url
    return m["scheme"] + m["authority"].rsplit("@", 1)[-1]


_install_lock = threading.Lock()
_installed = False


def _redact_record(record: logging.LogRecord) -> None:
    """The record's message and traceback text with every URL redacted (args merged in when
    a URL is there)."""
    if "://" in str(record.msg) or any("://" in str(a) for a in _args(record)):
        try:
            message = record.getMessage()
        except Exception:  # a malformed record: logging reports it when it formats it
            return
        record.msg, record.args = redact_urls_in(message), None
    if record.exc_info and record.exc_info[1] is not None and not record.exc_text:
        text = logging.Formatter().formatException(record.exc_info)
        redacted = redact_urls_in(text)
        if redacted != text:  # handlers that render exc_info themselves get the text only
            record.exc_text, record.exc_info = redacted, None


def _args(record: logging.LogRecord) -> tuple[object, ...]:
    args = record.args
    if isinstance(args, tuple):
        return args
    return () if args is None else (args,)


def install_log_redaction() -> None:
    """Redact URLs in every log record this process creates from now on, and quiet the
    request-URL loggers (see the module docstring); idempotent."""
    global _installed
    with _install_lock:
        if _installed:
            return
        make = logging.getLogRecordFactory()

        def factory(*args: object, **kwargs: object) -> logging.LogRecord:
            record = make(*args, **kwargs)
            _redact_record(record)
            return record

        logging.setLogRecordFactory(factory)
        for name in NOISY_LOGGERS:
            logger = logging.getLogger(name)
            if logger.level == logging.NOTSET:
                logger.setLevel(logging.WARNING)
        _installed = True
