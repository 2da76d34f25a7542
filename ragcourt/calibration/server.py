"""The local labelling page: a FastAPI app over a sample and a label store.

:func:`make_app` serves one static page (``static/label.html`` + ``label.js`` + ``label.css``,
no build step) and a small JSON API:

* ``GET /api/state``: progress of this labeller and the first unlabelled position (resume);
* ``GET /api/item/{position}``: one item in display order, without the system name, and the
  labeller's current label of it;
* ``POST /api/label`` ``{"item_id", "value"}``: validate and append a label
  (:class:`~ragcourt.calibration.labels.LabelStore`: atomic, fsync'ed) before answering, so
  a closed browser or a killed server loses at most the item on screen;
* ``POST /api/undo``: withdraw the labeller's most recent label (an ``undo`` record).

Safety: :class:`LabelServer` binds 127.0.0.1 only; the Host header must be ``127.0.0.1`` or
``localhost`` (no DNS rebinding); POSTs need the per-process token embedded in the page
(``X-Ragcourt-Token``; another site cannot read it) and a JSON body, both checked before any
byte of the body is read (:class:`GuardPosts`), and a body is at most
:data:`MAX_BODY_BYTES` (its Content-Length, and counted while it arrives); error replies name
the rule and never echo the request; the page's Content
Security Policy allows only its own script and style. No request value is used in a file
path or a shell: items are looked up by id in the in-memory sample, and the label file is the
store's fixed path. The page puts every text into the DOM with ``textContent`` (it is never
parsed as HTML), which is HTML escaping by construction.
"""

from __future__ import annotations

import json
import secrets
import socket
import threading
import time
from importlib import resources
from typing import Any

import polars as pl
import uvicorn
from fastapi import FastAPI, Header, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from pydantic import BaseModel, ConfigDict, StrictInt, StrictStr
from starlette.middleware.trustedhost import TrustedHostMiddleware

from ragcourt.calibration.labels import LabelStore, make_label
from ragcourt.core.errors import RagcourtError

LOOPBACK = "127.0.0.1"
TOKEN_PLACEHOLDER = "__RAGCOURT_TOKEN__"
_SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
        "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


MAX_BODY_BYTES = 16_384  # a label POST is a few dozen bytes


async def _refuse(send: Any, status: int, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    headers += [(k.lower().encode(), v.encode()) for k, v in _SECURITY_HEADERS.items()]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class GuardPosts:
    """ASGI middleware: a POST must carry the page token and a JSON content type, checked
    before its body is read (403 / 415), and its body may not pass ``MAX_BODY_BYTES`` (413:
    from its Content-Length, or counted while it arrives, the rest never read)."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.token = token

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        given = headers.get("x-ragcourt-token")
        if given is None or not secrets.compare_digest(given.encode(), self.token.encode()):
            await _refuse(send, 403, "missing or wrong page token")
            return
        if not headers.get("content-type", "").startswith("application/json"):
            await _refuse(send, 415, "expected a JSON body")
            return
        length = headers.get("content-length")
        too_large = f"body over {MAX_BODY_BYTES:,} bytes"
        if length is not None and (not length.isdigit() or int(length) > MAX_BODY_BYTES):
            await _refuse(send, 413, too_large)
            return
        # read the (small) body here, counting while it arrives, then hand it on whole
        chunks: list[bytes] = []
        seen = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            chunk = message.get("body", b"")
            seen += len(chunk)
            if seen > MAX_BODY_BYTES:
                await _refuse(send, 413, too_large)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        handed = False

        async def replay() -> Any:
            nonlocal handed
            if not handed:
                handed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


def static_text(name: str) -> str:
    """A file of the packaged ``static`` folder (only the names this module uses)."""
    root = resources.files("ragcourt.calibration") / "static"
    return (root / name).read_text(encoding="utf-8")


class LabelIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    item_id: StrictStr
    value: StrictStr | StrictInt  # a JSON true is not a label


def _public(item: dict[str, Any]) -> dict[str, Any]:
    """What the page may show of an item: never the system name or the stratum."""
    return {
        "item_id": item["item_id"],
        "kind": item["kind"],
        "question": item["question"],
        "references": list(item["references"] or []),
        "answer": item["answer"],
        "abstained": item["abstained"],
        "passage": item["passage"],
    }


class _Queue:
    """The sample's items in ``position`` order and the labels ``store`` holds for them."""

    def __init__(self, sample: pl.DataFrame, store: LabelStore) -> None:
        self.items = [dict(r) for r in sample.sort("position").iter_rows(named=True)]
        self.by_id = {it["item_id"]: i for i, it in enumerate(self.items)}
        self.store = store

    def progress(self) -> dict[str, Any]:
        current = self.store.current()
        done = sum(1 for it in self.items if it["item_id"] in current)
        first = next((i for i, it in enumerate(self.items) if it["item_id"] not in current), None)
        return {
            "total": len(self.items),
            "done": done,
            "next": first,
            "labeler": self.store.labeler,
        }

    def next_after(self, position: int) -> int | None:
        """The first unlabelled position after ``position``, wrapping around (None: all done)."""
        current = self.store.current()
        n = len(self.items)
        for k in range(1, n + 1):
            j = (position + k) % n
            if self.items[j]["item_id"] not in current:
                return j
        return None


def _guarded_app(token: str) -> FastAPI:
    """The bare app: loopback hosts only, POSTs need ``token``, security headers on every
    response, error bodies that never echo what was sent."""
    app = FastAPI(title="ragcourt labelling", docs_url=None, redoc_url=None, openapi_url=None)
    app.add_middleware(GuardPosts, token=token)  # inner: runs after the Host check
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=[LOOPBACK, "localhost"])

    @app.middleware("http")
    async def security_headers(request: Request, call_next: Any) -> Response:
        response: Response = await call_next(request)
        for k, v in _SECURITY_HEADERS.items():
            response.headers.setdefault(k, v)
        return response

    @app.exception_handler(RequestValidationError)
    async def invalid_body(request: Request, err: RequestValidationError) -> JSONResponse:
        """Which field is wrong and why, never the value sent (no echo)."""
        first = err.errors()[0] if err.errors() else {}
        where = ".".join(str(x) for x in first.get("loc", ()) if x != "body") or "body"
        return JSONResponse({"detail": f"invalid {where}: {first.get('type', 'value')}"}, 422)

    @app.exception_handler(RagcourtError)
    async def ragcourt_error(request: Request, err: RagcourtError) -> JSONResponse:
        return JSONResponse({"detail": str(err)}, status_code=500)

    return app


def _add_page_routes(app: FastAPI, token: str) -> None:
    """``/`` (the page, carrying ``token``), its script and its style sheet."""
    page = static_text("label.html").replace(TOKEN_PLACEHOLDER, token)

    @app.get("/", response_class=HTMLResponse)
    def index() -> HTMLResponse:
        return HTMLResponse(page)

    @app.get("/label.js")
    def script() -> Response:
        return Response(static_text("label.js"), media_type="text/javascript; charset=utf-8")

    @app.get("/label.css")
    def style() -> Response:
        return Response(static_text("label.css"), media_type="text/css; charset=utf-8")


def _add_api_routes(app: FastAPI, queue: _Queue, token: str) -> None:
    """``/api/state``, ``/api/item/{position}``, and the POSTs ``/api/label`` and ``/api/undo``
    (which need ``token`` in ``X-Ragcourt-Token`` and a JSON body)."""
    items, store = queue.items, queue.store

    def check(x_ragcourt_token: str | None, content_type: str | None) -> None:
        if x_ragcourt_token is None or not secrets.compare_digest(x_ragcourt_token, token):
            raise HTTPException(status_code=403, detail="missing or wrong page token")
        if content_type is None or not content_type.startswith("application/json"):
            raise HTTPException(status_code=415, detail="expected a JSON body")

    @app.get("/api/state")
    def state() -> dict[str, Any]:
        return queue.progress()

    @app.get("/api/item/{position}")
    def item(position: int) -> dict[str, Any]:
        if not 0 <= position < len(items):
            raise HTTPException(status_code=404, detail="no item at this position")
        it = items[position]
        lab = store.current().get(it["item_id"])
        return {
            "position": position,
            "item": _public(it),
            "label": None if lab is None else lab.value,
            **{k: v for k, v in queue.progress().items() if k != "next"},
        }

    @app.post("/api/label")
    def label(
        body: LabelIn,
        x_ragcourt_token: str | None = Header(default=None),
        content_type: str | None = Header(default=None),
    ) -> dict[str, Any]:
        check(x_ragcourt_token, content_type)
        pos = queue.by_id.get(body.item_id)
        if pos is None:
            raise HTTPException(status_code=404, detail="unknown item")
        try:
            record = make_label(items[pos], body.value, store.labeler, "web")
        except RagcourtError:  # the rule, not the value sent (no echo)
            allowed = (
                "correct, incorrect, cant_tell" if items[pos]["kind"] == "answer" else "0, 1, 2"
            )
            raise HTTPException(status_code=422, detail=f"not a label: one of {allowed}") from None
        store.append(record)
        return queue.progress() | {
            "position": pos,
            "next": queue.next_after(pos),
            "label": record.value,
        }

    @app.post("/api/undo")
    def undo(
        x_ragcourt_token: str | None = Header(default=None),
        content_type: str | None = Header(default=None),
    ) -> dict[str, Any]:
        check(x_ragcourt_token, content_type)
        item_id = store.undo_last()
        pos = None if item_id is None else queue.by_id.get(item_id)
        return queue.progress() | {"undone": item_id, "position": pos}


def make_app(sample: pl.DataFrame, store: LabelStore) -> FastAPI:
    """The labelling app for ``sample`` (SAMPLE_SCHEMA rows, shown in ``position`` order)
    writing to ``store``. Each app has its own random token."""
    token = secrets.token_hex(16)
    app = _guarded_app(token)
    _add_page_routes(app, token)
    _add_api_routes(app, _Queue(sample, store), token)
    return app


class LabelServer:
    """uvicorn serving an app on 127.0.0.1 (``port=0``: a free port), in the foreground
    (:meth:`serve_forever`) or a background thread (:meth:`start` / :meth:`stop`)."""

    def __init__(self, app: FastAPI, port: int = 0) -> None:
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self._sock.bind((LOOPBACK, port))
        except OSError as err:
            self._sock.close()
            raise RagcourtError(f"cannot listen on {LOOPBACK}:{port} ({err.strerror})") from None
        self.port: int = self._sock.getsockname()[1]
        config = uvicorn.Config(app, host=LOOPBACK, port=self.port, log_level="warning")
        self._server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}/"

    def serve_forever(self) -> None:
        """Serve until interrupted (Ctrl-C)."""
        try:
            self._server.run(sockets=[self._sock])
        finally:
            self._sock.close()

    def start(self, timeout_s: float = 10.0) -> LabelServer:
        """Serve in a daemon thread; return once the server accepts connections."""
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout_s
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RagcourtError("the labelling server did not start")
            time.sleep(0.02)
        return self

    def stop(self, timeout_s: float = 10.0) -> None:
        """Ask the server to exit and wait for its thread."""
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout_s)
