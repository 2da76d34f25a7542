"""The labelling app's API (FastAPI TestClient; the real browser test is in integration)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Protocol

import httpx
import polars as pl
import pytest
from fastapi.testclient import TestClient

from ragcourt.calibration.labels import LabelStore
from ragcourt.calibration.sampling import SampleParams, sample_items
from ragcourt.calibration.server import LabelServer, make_app


class Reply(Protocol):
    """What the tests read from a TestClient response (starlette's client may be httpx2's)."""

    @property
    def status_code(self) -> int: ...

    @property
    def text(self) -> str: ...

    def json(self) -> Any: ...


@pytest.fixture()
def setup(tmp_path: Path, world: Any) -> tuple[TestClient, pl.DataFrame, LabelStore, str]:
    sample = sample_items(
        world.qa,
        world.answers,
        world.verdicts,
        world.correctness,
        world.relevance,
        SampleParams(n_answer_items=9, n_passage_items=3),
    )
    store = LabelStore(tmp_path / "labels", "ann")
    client = TestClient(make_app(sample, store), base_url="http://127.0.0.1")
    page = client.get("/")
    match = re.search(r'name="ragcourt-token" content="([0-9a-f]{32})"', page.text)
    assert match is not None
    return client, sample, store, match.group(1)


def _post(client: TestClient, token: str, path: str, body: dict[str, Any]) -> Reply:
    return client.post(path, json=body, headers={"X-Ragcourt-Token": token})


def test_page_and_assets_are_served_with_a_strict_policy(setup: Any) -> None:
    client, _, _, _ = setup
    page = client.get("/")
    assert page.status_code == 200 and "ragcourt labelling" in page.text
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert "<script>" not in page.text  # no inline script: the CSP forbids it
    for system in ("alpha", "beta", "gamma"):
        assert system not in page.text
    assert client.get("/label.js").headers["content-type"].startswith("text/javascript")
    assert "textContent" in client.get("/label.js").text
    assert "innerHTML" not in client.get("/label.js").text
    assert client.get("/label.css").status_code == 200
    assert client.get("/docs").status_code == 404


def test_items_hide_the_system_and_labels_are_saved(setup: Any) -> None:
    client, sample, store, token = setup
    st = client.get("/api/state").json()
    assert st == {"total": sample.height, "done": 0, "next": 0, "labeler": "ann"}
    item = client.get("/api/item/0").json()
    assert "system" not in item["item"] and "stratum" not in item["item"]
    assert item["label"] is None and item["position"] == 0
    kind = item["item"]["kind"]
    value: str | int = "incorrect" if kind == "answer" else 1
    res = _post(client, token, "/api/label", {"item_id": item["item"]["item_id"], "value": value})
    assert res.status_code == 200, res.text
    assert res.json()["done"] == 1 and res.json()["next"] == 1
    assert [r.item_id for r in store.records()] == [item["item"]["item_id"]]
    assert client.get("/api/item/0").json()["label"] == value
    assert client.get("/api/state").json()["next"] == 1
    undo = _post(client, token, "/api/undo", {}).json()
    assert undo["undone"] == item["item"]["item_id"] and undo["position"] == 0
    assert client.get("/api/state").json()["done"] == 0
    assert _post(client, token, "/api/undo", {}).json()["undone"] is None


def test_bad_requests_are_refused(setup: Any) -> None:
    client, sample, store, token = setup
    first = client.get("/api/item/0").json()["item"]
    body = {"item_id": first["item_id"], "value": "correct" if first["kind"] == "answer" else 0}
    assert client.post("/api/label", json=body).status_code == 403  # no token
    assert _post(client, "0" * 32, "/api/label", body).status_code == 403
    plain = client.post(
        "/api/label",
        content=b'{"item_id": "x", "value": 1}',
        headers={"X-Ragcourt-Token": token, "Content-Type": "text/plain"},
    )
    assert plain.status_code in (415, 422)
    assert _post(client, token, "/api/label", {"item_id": "a-0", "value": 1}).status_code == 404
    bad = _post(client, token, "/api/label", {"item_id": first["item_id"], "value": "maybe"})
    assert bad.status_code == 422 and "not a label: one of" in bad.json()["detail"]
    assert "maybe" not in bad.text  # the value sent is never echoed
    for value in (True, 1.0, None, [1]):  # strictly typed: a JSON true is not a label
        typed = _post(client, token, "/api/label", {"item_id": first["item_id"], "value": value})
        assert typed.status_code == 422, value
    assert client.get(f"/api/item/{sample.height}").status_code == 404
    assert client.get("/api/item/-1").status_code == 404
    evil = TestClient(client.app, base_url="http://evil.example")
    assert evil.get("/api/state").status_code == 400  # DNS rebinding: wrong Host
    assert not store.path.exists()


def test_label_server_binds_loopback_on_a_free_port(setup: Any) -> None:
    client, _, _, _ = setup
    server = LabelServer(client.app).start()
    try:
        assert server.url.startswith("http://127.0.0.1:") and server.port > 0
        assert httpx.get(server.url + "api/state", timeout=5).json()["done"] == 0
    finally:
        server.stop()
    with pytest.raises(httpx.ConnectError):
        httpx.get(server.url + "api/state", timeout=2)


def test_a_huge_body_is_refused_before_it_is_read_and_never_echoed(setup: Any) -> None:
    """A real server on loopback: a 50 MB POST without the token is 403 from the headers alone,
    with the token it is 413 from its Content-Length, and a chunked one (no Content-Length) is
    cut off at the cap while it arrives; no reply echoes what was sent."""
    import socket

    client, _, store, token = setup
    server = LabelServer(client.app).start()
    try:
        host, port = "127.0.0.1", server.port

        def raw(headers: str, body_chunks: int) -> bytes:
            with socket.create_connection((host, port), timeout=10) as sock:
                sock.sendall(headers.encode())
                sent = 0
                try:
                    for _ in range(body_chunks):
                        sock.sendall(b"4000\r\n" + b"A" * 0x4000 + b"\r\n" if "chunked" in headers
                                     else b"A" * 65_536)  # fmt: skip
                        sent += 1
                except (BrokenPipeError, ConnectionResetError):
                    pass
                sock.settimeout(10)
                data = b""
                try:
                    while chunk := sock.recv(65_536):
                        data += chunk
                except (TimeoutError, ConnectionResetError):
                    pass
                return data

        big = 50_000_000
        no_token = raw(
            f"POST /api/label HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {big}\r\nConnection: close\r\n\r\n",
            4,
        )
        assert b" 403 " in no_token.split(b"\r\n")[0] and b"AAAA" not in no_token
        declared = raw(
            f"POST /api/label HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            f"X-Ragcourt-Token: {token}\r\nContent-Length: {big}\r\nConnection: close\r\n\r\n",
            4,
        )
        assert b" 413 " in declared.split(b"\r\n")[0] and b"AAAA" not in declared
        chunked = raw(
            f"POST /api/label HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            f"X-Ragcourt-Token: {token}\r\nTransfer-Encoding: chunked\r\n"
            "Connection: close\r\n\r\n",
            64,
        )
        assert b" 413 " in chunked.split(b"\r\n")[0] and b"AAAA" not in chunked, chunked
    finally:
        server.stop()
    assert not store.path.exists()
