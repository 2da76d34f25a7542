"""``ragcourt doctor``'s probes have a total deadline, not a per-read timeout: a real local
server that sends its headers and then one byte every half second (each read well within a
per-read timeout) is given up on at the deadline, as one check line."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from ragcourt.cli.doctor import check_hosted_model
from ragcourt.llm import providers
from ragcourt.llm.params import EndpointParams, LLMParams
from ragcourt.orchestration.params import Params


class Trickle(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        return None

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "100000")
        self.end_headers()
        try:
            for _ in range(120):  # a minute, if nobody stops reading
                self.wfile.write(b" ")
                self.wfile.flush()
                time.sleep(0.5)
        except (BrokenPipeError, ConnectionResetError):
            pass


@pytest.fixture
def trickle() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Trickle)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_a_trickling_server_is_given_up_on_at_the_deadline(
    trickle: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RC_TEST_KEY", "k")
    params = Params(
        llm=LLMParams(
            endpoints={"openai/": EndpointParams(api_base=trickle, api_key_env="RC_TEST_KEY")}
        )
    )
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    providers.configure_litellm()  # imported before the clock starts (seconds of its own)
    t0 = time.perf_counter()
    checks = {c.name: c for c in check_hosted_model(params, "openai/m", ["judge"], timeout_s=2.0)}
    wall = time.perf_counter() - t0
    base = checks["hosted openai/m API base"]
    assert base.status == "fail" and "within 2s" in base.detail, base
    assert wall < 6, f"{wall:.1f} s"
