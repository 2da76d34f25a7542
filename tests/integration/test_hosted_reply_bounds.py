"""Hosted replies are read through one bounded reader: a body past ``llm.reply_max_bytes`` (plain
or a gzip bomb) is refused while it streams, and a content-encoding ragcourt cannot bound while
decoding (zstd, br, stacked) is refused before its body is read. Real local HTTP servers, the
real gateway and litellm; each refusal is one line naming the param or the encoding, with no
retry, and the peak memory stays far below the expanded size."""

from __future__ import annotations

import contextlib
import json
import resource
import threading
import time
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from ragcourt.llm import ChatRequest, Gateway
from ragcourt.llm.accounting import reset_accounts
from ragcourt.llm.params import EndpointParams, LLMParams

BOMB_EXPANDED = 400_000_000  # bytes of zeros behind the gzip bomb


def _completion(text: str) -> bytes:
    return json.dumps(
        {
            "id": "x",
            "object": "chat.completion",
            "created": 0,
            "model": "m",
            "choices": [
                {"index": 0, "finish_reason": "stop",
                 "message": {"role": "assistant", "content": text}}
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
    ).encode()  # fmt: skip


def _gzip_bomb() -> bytes:
    comp = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    block = bytes(1 << 20)
    parts = [comp.compress(block) for _ in range(BOMB_EXPANDED >> 20)]
    return b"".join(parts) + comp.flush()


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, dict[str, int]]]:
    bomb = _gzip_bomb()
    big = _completion("x" * 3_000_000)
    hits: dict[str, int] = {}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            return None

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            kind = self.path.strip("/").split("/")[0]
            hits[kind] = hits.get(kind, 0) + 1
            body, encoding = {
                "big": (big, None),
                "bomb": (bomb, "gzip"),
                "zstd": (b"\x28\xb5\x2f\xfd" + bytes(64), "zstd"),
                "stacked": (_completion("hi"), "gzip, br"),
                "small": (zlib.compress(_completion("hello"), 9), "deflate"),
            }[kind]
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            if encoding:
                self.send_header("Content-Encoding", encoding)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(body)

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_address[1]}", hits
    srv.shutdown()
    srv.server_close()


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    reset_accounts()
    monkeypatch.setenv("RC_TEST_KEY", "k")


def _call(tmp_path: Path, base: str, max_bytes: int = 1_000_000) -> Any:
    params = LLMParams(
        cache=True,
        cache_dir=str(tmp_path / "cache"),
        metrics_dir=str(tmp_path / "m"),
        max_retries=2,
        retry_backoff_s=0.01,
        timeout_s=30,
        reply_max_bytes=max_bytes,
        endpoints={"openai/": EndpointParams(api_base=base, api_key_env="RC_TEST_KEY")},
    )
    [res] = Gateway(params, "t_bounds").chat([ChatRequest.of("openai/m", None, "hello")])
    return res


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def test_a_body_over_the_cap_is_refused_while_it_streams(
    tmp_path: Path, server: tuple[str, dict[str, int]]
) -> None:
    base, hits = server
    res = _call(tmp_path, f"{base}/big")
    assert not res.ok and "llm.reply_max_bytes" in (res.error or "")
    assert "\n" not in (res.error or "")
    assert hits["big"] == 1  # refused, not retried
    again = _call(tmp_path, f"{base}/big")  # nothing was cached
    assert not again.ok and hits["big"] == 2


def test_a_gzip_bomb_stops_at_the_cap_with_bounded_memory(
    tmp_path: Path, server: tuple[str, dict[str, int]]
) -> None:
    base, _ = server
    before, t0 = _peak_mb(), time.perf_counter()
    res = _call(tmp_path, f"{base}/bomb")
    wall = time.perf_counter() - t0
    grown = _peak_mb() - before
    assert not res.ok and "llm.reply_max_bytes" in (res.error or "")
    assert grown < 300, f"peak RSS grew {grown:.0f} MB for a {BOMB_EXPANDED >> 20} MB bomb"
    assert wall < 10, f"{wall:.1f} s"


@pytest.mark.parametrize("kind", ["zstd", "stacked"])
def test_an_encoding_that_cannot_be_bounded_is_refused_before_reading(
    tmp_path: Path, server: tuple[str, dict[str, int]], kind: str
) -> None:
    base, _ = server
    res = _call(tmp_path, f"{base}/{kind}")
    assert not res.ok and "Content-Encoding" in (res.error or "")


def test_a_bounded_encoding_within_the_cap_is_read(
    tmp_path: Path, server: tuple[str, dict[str, int]]
) -> None:
    base, _ = server
    res = _call(tmp_path, f"{base}/small")
    assert res.ok and res.text == "hello"
