"""One bounded reader for every HTTP byte stream ragcourt reads from someone else's server:
HTTP systems' replies, hosted model replies (litellm), ``ragcourt doctor``'s probes.

**Encodings.** Requests advertise only what is decoded here with a bound
(:data:`ACCEPT_ENCODING`: ``gzip, deflate``); a reply in any other content-encoding (``br``,
``zstd``, stacked encodings, ...) is :class:`UnsupportedEncoding` before its body is read, so
no decoder ragcourt cannot bound ever runs.

**Size.** :class:`BoundedDecoder` decodes while the body streams and never produces more than
``max_bytes + 1`` decoded bytes (zlib's ``max_length``: one compressed chunk cannot expand past
the bound); past ``max_bytes`` it raises :class:`BodyTooLarge` and the rest is never read.

**Redirects.** :func:`check_redirect` raises :class:`RedirectRefused` for a redirect to another
origin (scheme, host, port): the request's headers (``Authorization``, ``x-api-key``,
``api-key``, ...) never follow it. A same-origin redirect is left to the client.

:class:`GuardedTransport` / :class:`GuardedSyncTransport` apply all three to any httpx
transport (the hosted route installs them under litellm); :func:`aread_bounded` applies the
encoding and size rules to a streamed response; :func:`get_bounded` is a GET with a total
deadline (connect, headers and every byte of the body), not a per-read timeout.
"""

from __future__ import annotations

import asyncio
import contextvars
import itertools
import zlib
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

import httpx

from ragcourt.core.redact import redact_url
from ragcourt.core.scoped import scoped

#: the content-encodings ragcourt decodes with a bound (identity is always accepted)
ACCEPT_ENCODING = "gzip, deflate"
_ZLIB_WBITS = {"gzip": zlib.MAX_WBITS | 16, "x-gzip": zlib.MAX_WBITS | 16, "deflate": 0}
_REDIRECTS = frozenset({301, 302, 303, 307, 308})


class UnsafeReply(httpx.RequestError):
    """A reply ragcourt refuses to read further; ``str()`` is one line."""


class BodyTooLarge(UnsafeReply):
    """The decoded body passed its byte bound; the rest was not read."""


class UnsupportedEncoding(UnsafeReply):
    """The reply's content-encoding is not one ragcourt decodes with a bound."""


class RedirectRefused(UnsafeReply):
    """A redirect to another origin: not followed, so no credential header goes along.
    ``target`` is where it pointed (secrets masked)."""

    def __init__(self, message: str, *, target: str, request: httpx.Request | None = None):
        super().__init__(message, request=request)
        self.target = target


class DeadlineExceeded(UnsafeReply):
    """No complete reply (headers and body) within the total deadline."""


@dataclass(frozen=True)
class ReplyBound:
    """The byte bound of a reply body and the param that sets it (named in the error)."""

    max_bytes: int
    param: str


#: the bound of a guarded transport outside any :func:`guarded_call` that has none of its own
DEFAULT_BOUND = ReplyBound(10_000_000, "llm.reply_max_bytes")


@dataclass
class GuardedCall:
    """One call made through guarded transports: its bound, and every reply they refused
    (kept here because a library may drop the exception's cause on the way up)."""

    bound: ReplyBound
    refused: list[UnsafeReply] = field(default_factory=list)


_CALL: contextvars.ContextVar[GuardedCall | None] = contextvars.ContextVar(
    "ragcourt_guarded_call", default=None
)


def guarded_call(bound: ReplyBound) -> AbstractContextManager[GuardedCall]:
    """Within the block (this context, and the tasks started from it), guarded transports
    without a bound of their own apply ``bound`` and record what they refuse."""
    return scoped(_CALL, GuardedCall(bound))


def _context_bound() -> ReplyBound:
    call = _CALL.get()
    return call.bound if call is not None else DEFAULT_BOUND


def _note(err: UnsafeReply) -> None:
    call = _CALL.get()
    if call is not None:
        call.refused.append(err)


def origin(url: httpx.URL) -> tuple[str, str, int | None]:
    """(scheme, host, port) with the scheme's default port filled in."""
    port = url.port or {"http": 80, "https": 443}.get(url.scheme)
    return url.scheme, url.host, port


def _where(request: httpx.Request) -> str:
    return f"{request.method} {redact_url(str(request.url.copy_with(query=None)))}"


def check_redirect(request: httpx.Request, status: int, headers: httpx.Headers) -> None:
    """:class:`RedirectRefused` when this reply redirects to another origin."""
    location = headers.get("location")
    if status not in _REDIRECTS or not location:
        return
    try:
        target = request.url.join(location)
    except httpx.InvalidURL:
        target = None
    if target is not None and origin(target) == origin(request.url):
        return
    shown = redact_url(str(target)) if target is not None else "an invalid URL"
    raise RedirectRefused(
        f"{_where(request)} redirected ({status}) to another origin, {shown}; not followed, "
        "so the request's credentials stay with the host they were meant for",
        target=shown,
        request=request,
    )


def check_encoding(request: httpx.Request, headers: httpx.Headers) -> str | None:
    """The one content-encoding of the reply to decode (None: identity), or
    :class:`UnsupportedEncoding` for any encoding not in :data:`ACCEPT_ENCODING`."""
    raw = headers.get("content-encoding", "")
    codes = [c.strip().lower() for c in raw.split(",") if c.strip()]
    codes = [c for c in codes if c != "identity"]
    if not codes:
        return None
    if len(codes) == 1 and codes[0] in _ZLIB_WBITS:
        return str(codes[0])
    raise UnsupportedEncoding(
        f"reply of {_where(request)} has Content-Encoding {raw.strip()!r}; ragcourt reads only "
        f"{ACCEPT_ENCODING} (it cannot bound the size of others while decoding)",
        request=request,
    )


class BoundedDecoder:
    """Decodes one content-encoding (None: identity) while the body streams, raising
    :class:`BodyTooLarge` as soon as the decoded size passes ``max_bytes``."""

    def __init__(self, encoding: str | None, max_bytes: int, too_large: Callable[[], str]):
        self.max_bytes = max_bytes
        self.total = 0
        self._too_large = too_large
        self._encoding = encoding
        wbits = _ZLIB_WBITS.get(encoding or "")
        self._zlib = zlib.decompressobj(wbits) if wbits is not None else None
        self._first = True

    def _count(self, out: bytes) -> bytes:
        self.total += len(out)
        if self.total > self.max_bytes:
            raise BodyTooLarge(self._too_large())
        return out

    def feed(self, data: bytes) -> bytes:
        """The decoded bytes of ``data`` (at most the bound + 1 are ever produced)."""
        if self._zlib is None:
            return self._count(data)
        room = self.max_bytes - self.total + 1
        try:
            out = self._zlib.decompress(data, room)
        except zlib.error as err:
            if not (self._first and self._encoding == "deflate"):
                raise httpx.DecodingError(f"reply is not valid {self._encoding}: {err}") from None
            # "deflate" without the zlib header (raw deflate), as some servers send it
            self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)
            self._first = False
            return self.feed(data)
        self._first = False
        return self._count(out)

    def finish(self) -> bytes:
        """What the decoder still holds once the body ended (bounded like :meth:`feed`)."""
        if self._zlib is None:
            return b""
        return self._count(self._zlib.decompress(b"", self.max_bytes - self.total + 1))


def _too_large(request: httpx.Request, bound: ReplyBound) -> Callable[[], str]:
    def message() -> str:
        return (
            f"reply of {_where(request)} is over {bound.param} ({bound.max_bytes:,} bytes); "
            "cut off unread"
        )

    return message


def _declared_too_large(headers: httpx.Headers, encoding: str | None, max_bytes: int) -> bool:
    declared = headers.get("content-length", "")
    return encoding is None and declared.isdigit() and int(declared) > max_bytes


async def aread_bounded(resp: httpx.Response, bound: ReplyBound) -> bytes:
    """The decoded body of a streamed ``resp`` (sent with ``stream=True``), read while it
    streams: :class:`BodyTooLarge` past ``bound``, :class:`UnsupportedEncoding` for an
    encoding outside :data:`ACCEPT_ENCODING` (before any byte is read)."""
    encoding = check_encoding(resp.request, resp.headers)
    message = _too_large(resp.request, bound)
    if _declared_too_large(resp.headers, encoding, bound.max_bytes):
        raise BodyTooLarge(message(), request=resp.request)
    decoder = BoundedDecoder(encoding, bound.max_bytes, message)
    parts = [decoder.feed(chunk) async for chunk in resp.aiter_raw()]
    parts.append(decoder.finish())
    return b"".join(parts)


def _guarded_headers(headers: httpx.Headers, encoding: str | None) -> httpx.Headers:
    if encoding is None:
        return headers
    drop = {"content-encoding", "content-length"}  # the body is handed on decoded
    return httpx.Headers([(k, v) for k, v in headers.multi_items() if k.lower() not in drop])


class _BoundedDecoding:
    """What the sync and async guarded streams share: the decoder and the record of a refusal."""

    def __init__(self, decoder: BoundedDecoder) -> None:
        self._decoder = decoder

    def _decoded(self, chunk: bytes | None) -> list[bytes]:
        """The decoded bytes ``chunk`` completes (None: the end of the body), as 0 or 1 parts."""
        out = self._decoder.feed(chunk) if chunk is not None else self._decoder.finish()
        return [out] if out else []

    @staticmethod
    def _failed(err: BaseException) -> None:
        if isinstance(err, UnsafeReply):
            _note(err)


class _AsyncBoundedStream(_BoundedDecoding, httpx.AsyncByteStream):
    def __init__(self, raw: httpx.AsyncByteStream, decoder: BoundedDecoder) -> None:
        super().__init__(decoder)
        self._raw = raw

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._raw:
                for out in self._decoded(chunk):
                    yield out
            for out in self._decoded(None):
                yield out
        except BaseException as err:
            self._failed(err)
            await self._raw.aclose()
            raise

    async def aclose(self) -> None:
        await self._raw.aclose()


class _SyncBoundedStream(_BoundedDecoding, httpx.SyncByteStream):
    def __init__(self, raw: httpx.SyncByteStream, decoder: BoundedDecoder) -> None:
        super().__init__(decoder)
        self._raw = raw

    def __iter__(self) -> Iterator[bytes]:
        try:
            for chunk in itertools.chain(self._raw, [None]):
                yield from self._decoded(chunk)
        except BaseException as err:
            self._failed(err)
            self._raw.close()
            raise

    def close(self) -> None:
        self._raw.close()


def _decoded_response(
    request: httpx.Request,
    response: httpx.Response,
    encoding: str | None,
    stream: httpx.SyncByteStream | httpx.AsyncByteStream,
) -> httpx.Response:
    """``response`` with its body read through ``stream`` (decoded, within the bound)."""
    return httpx.Response(
        response.status_code,
        headers=_guarded_headers(response.headers, encoding),
        stream=stream,
        request=request,
        extensions=response.extensions,
    )


def _prepare(request: httpx.Request) -> None:
    request.headers["Accept-Encoding"] = ACCEPT_ENCODING


def _checked(request: httpx.Request, response: httpx.Response, bound: ReplyBound) -> str | None:
    check_redirect(request, response.status_code, response.headers)
    encoding = check_encoding(request, response.headers)
    if _declared_too_large(response.headers, encoding, bound.max_bytes):
        raise BodyTooLarge(_too_large(request, bound)())
    return encoding


class GuardedTransport(httpx.AsyncBaseTransport):
    """``inner`` with the module's rules: only bounded encodings advertised and accepted, the
    body decoded here within ``bound`` (default: the :func:`guarded_call`'s), and no
    redirect to another origin. Other attributes are the inner transport's."""

    def __init__(self, inner: httpx.AsyncBaseTransport, bound: ReplyBound | None = None):
        self.inner = inner
        self._bound = bound

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        _prepare(request)
        bound = self._bound or _context_bound()
        response = await self.inner.handle_async_request(request)
        try:
            encoding = _checked(request, response, bound)
        except UnsafeReply as err:
            _note(err)
            await response.aclose()
            raise
        assert isinstance(response.stream, httpx.AsyncByteStream)
        decoder = BoundedDecoder(encoding, bound.max_bytes, _too_large(request, bound))
        return _decoded_response(
            request, response, encoding, _AsyncBoundedStream(response.stream, decoder)
        )

    async def aclose(self) -> None:
        await self.inner.aclose()


class GuardedSyncTransport(httpx.BaseTransport):
    """:class:`GuardedTransport` for synchronous clients."""

    def __init__(self, inner: httpx.BaseTransport, bound: ReplyBound | None = None):
        self.inner = inner
        self._bound = bound

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        _prepare(request)
        bound = self._bound or _context_bound()
        response = self.inner.handle_request(request)
        try:
            encoding = _checked(request, response, bound)
        except UnsafeReply as err:
            _note(err)
            response.close()
            raise
        assert isinstance(response.stream, httpx.SyncByteStream)
        decoder = BoundedDecoder(encoding, bound.max_bytes, _too_large(request, bound))
        return _decoded_response(
            request, response, encoding, _SyncBoundedStream(response.stream, decoder)
        )

    def close(self) -> None:
        self.inner.close()


@dataclass(frozen=True)
class Fetched:
    """A complete reply of :func:`get_bounded`."""

    status: int
    body: bytes
    headers: httpx.Headers


async def aget_bounded(
    url: str, headers: Mapping[str, str], bound: ReplyBound, deadline_s: float
) -> Fetched:
    """GET ``url`` (no redirect followed) and read its body within ``bound``, all of it within
    ``deadline_s`` seconds: :class:`DeadlineExceeded` otherwise, whatever the server trickles."""
    sent = {**headers, "Accept-Encoding": ACCEPT_ENCODING}
    try:
        async with asyncio.timeout(deadline_s):
            async with httpx.AsyncClient(timeout=deadline_s, follow_redirects=False) as client:
                request = client.build_request("GET", url, headers=sent)
                resp = await client.send(request, stream=True)
                try:
                    check_redirect(request, resp.status_code, resp.headers)
                    body = await aread_bounded(resp, bound)
                finally:
                    await resp.aclose()
    except TimeoutError:
        raise DeadlineExceeded(
            f"GET {redact_url(url)}: no complete reply within {deadline_s:g}s"
        ) from None
    return Fetched(resp.status_code, body, resp.headers)


def get_bounded(
    url: str, headers: Mapping[str, str], bound: ReplyBound, deadline_s: float
) -> Fetched:
    """:func:`aget_bounded` from synchronous code (in a helper thread when this thread
    already runs an event loop)."""

    def run() -> Fetched:
        return asyncio.run(aget_bounded(url, headers, bound, deadline_s))

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return run()
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(run).result()
