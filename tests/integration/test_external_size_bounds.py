"""Sizes an external system hands the answer stage are bounded (params ``limits``): a real
local HTTP server sending a 20 MB body (cut off while it streams), an over-long answer or
passage (error rows naming the limit), 500 passages with duplicates (deduped, capped), the
same through a real Python worker and a real parquet answers file, and JSON nested deeper
than the bound (an error row / a one-line error naming the file and line)."""

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
from typing import ClassVar

import polars as pl
import pytest

from ragcourt.answering.external.answers_file import answer_from_file, read_answers_file
from ragcourt.answering.external.http_endpoint import answer_over_http
from ragcourt.answering.external.python_callable import answer_with_python
from ragcourt.answering.external.specs import HttpSpec, PythonSpec
from ragcourt.core.errors import SchemaError
from ragcourt.core.params import LimitsParams
from ragcourt.core.user_json import MAX_JSON_DEPTH

QA = pl.DataFrame(
    {
        "question_id": ["big", "long", "many", "deep", "ok"],
        "question": ["a?", "b?", "c?", "d?", "e?"],
    }
)
LIMITS = LimitsParams(
    http_reply_max_bytes=1_000_000,
    answer_max_chars=50_000,
    context_max_chars=50_000,
    contexts_max=50,
)
MANY = [f"passage {i % 250}" for i in range(500)]  # 250 distinct texts, each twice
DEEP = "[" * 5000 + "]" * 5000
ZSTD_FRAME = b"\x28\xb5\x2f\xfd" + bytes(64)  # a zstd magic number: never decoded
BOMB_MB = 300


def _gzip_bomb() -> bytes:
    comp = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    head = comp.compress(b'{"answer": "')
    zeros = b"".join(comp.compress(b"0" * (1 << 20)) for _ in range(BOMB_MB))
    return head + zeros + comp.compress(b'"}') + comp.flush()


GZIP_BOMB = _gzip_bomb()


class Service(BaseHTTPRequestHandler):
    """Answers by question id; ``big`` streams 20 MB without a Content-Length."""

    sent_big: ClassVar[list[int]] = []

    def log_message(self, *args: object) -> None:
        return None

    def do_POST(self) -> None:
        qid = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["id"]
        if qid == "big":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            sent, chunk = 0, b'{"answer": "' + b"x" * 65_536
            try:
                while sent < 20_000_000:
                    self.wfile.write(chunk)
                    sent += len(chunk)
                    chunk = b"x" * 65_536
                self.wfile.write(b'"}')
            except (BrokenPipeError, ConnectionResetError):
                pass
            self.sent_big.append(sent)
            return
        body: bytes
        if qid in ("zstd", "bomb"):
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Encoding", "zstd" if qid == "zstd" else "gzip")
            payload = ZSTD_FRAME if qid == "zstd" else GZIP_BOMB
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(payload)
            return
        if qid == "offsets":
            body = json.dumps(
                {"answer": "a", "contexts": [{"text": "p", "char_start": 0, "char_end": 10**29}]}
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        if qid == "deep":
            body = ('{"answer": "x", "contexts": ' + DEEP + "}").encode()
        elif qid == "long":
            body = json.dumps({"answer": "y" * 60_000, "contexts": None}).encode()
        elif qid == "many":
            body = json.dumps({"answer": "many", "contexts": MANY}).encode()
        else:
            body = json.dumps({"answer": "fine", "contexts": ["same", "same"]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def service() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Service)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _by_id(df: pl.DataFrame) -> dict[str, dict[str, object]]:
    return {r["question_id"]: r for r in df.iter_rows(named=True)}


def test_http_reply_body_answer_passages_and_nesting_are_bounded(service: str) -> None:
    spec = HttpSpec.model_validate(
        {"name": "svc", "kind": "http", "url": f"{service}/ask", "answer_path": "answer",
         "contexts_path": "contexts", "body": {"id": "{question_id}", "q": "{question}"},
         "max_retries": 0}
    )  # fmt: skip
    rows = _by_id(answer_over_http("svc", "external:http", spec, QA, limits=LIMITS))
    assert rows["big"]["error"] == (
        f"reply of POST {service}/ask is over limits.http_reply_max_bytes (1,000,000 bytes); "
        "cut off unread"
    )
    assert Service.sent_big and Service.sent_big[-1] < 19_000_000  # the rest never read
    assert rows["long"]["error"] == (
        f"POST {service}/ask: answer is 60,000 characters, over limits.answer_max_chars (50,000)"
    )
    assert rows["deep"]["error"] == (
        f"reply of POST {service}/ask: JSON nested deeper than {MAX_JSON_DEPTH} levels"
    )
    many = rows["many"]["retrieved"]
    assert isinstance(many, list) and len(many) == 50
    assert [p["text"] for p in many] == [f"passage {i}" for i in range(50)]
    assert [p["rank"] for p in many] == list(range(1, 51))
    ok = rows["ok"]["retrieved"]
    assert isinstance(ok, list) and [p["text"] for p in ok] == ["same"]  # duplicates kept once
    assert rows["ok"]["answer"] == "fine"


def test_zstd_is_refused_and_a_gzip_bomb_stops_at_the_cap(service: str) -> None:
    """A zstd reply is refused before it is decoded; a 300 MB gzip bomb is decoded only up to
    limits.http_reply_max_bytes (peak memory and wall time stated)."""
    spec = HttpSpec.model_validate(
        {"name": "svc", "kind": "http", "url": f"{service}/ask", "answer_path": "answer",
         "body": {"id": "{question_id}", "q": "{question}"}, "max_retries": 2}
    )  # fmt: skip
    qa = pl.DataFrame({"question_id": ["zstd", "bomb"], "question": ["z?", "b?"]})
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t0 = time.perf_counter()
    rows = _by_id(answer_over_http("svc", "external:http", spec, qa, limits=LIMITS))
    wall = time.perf_counter() - t0
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - before
    assert "Content-Encoding 'zstd'" in str(rows["zstd"]["error"])
    assert "limits.http_reply_max_bytes" in str(rows["bomb"]["error"])
    assert grown < 300, f"peak RSS grew {grown:.0f} MB for a {BOMB_MB} MB bomb"
    assert wall < 10, f"{wall:.1f} s"


def test_an_out_of_range_offset_is_an_error_row_not_a_null(service: str) -> None:
    spec = HttpSpec.model_validate(
        {"name": "svc", "kind": "http", "url": f"{service}/ask", "answer_path": "answer",
         "contexts_path": "contexts", "body": {"id": "{question_id}", "q": "{question}"},
         "max_retries": 0}
    )  # fmt: skip
    qa = pl.DataFrame({"question_id": ["offsets"], "question": ["o?"]})
    [row] = answer_over_http("svc", "external:http", spec, qa, limits=LIMITS).to_dicts()
    assert row["answer"] is None and "char_end" in str(row["error"])
    assert "out of range" in str(row["error"])


USER_MODULE = f"""
MANY = {MANY!r}

def answer(question, question_id):
    if question_id == "long":
        return "z" * 60_000
    if question_id == "many":
        return {{"answer": "many", "contexts": MANY}}
    if question_id == "big":
        return {{"answer": "ok", "contexts": ["p" * 50_001]}}
    return "fine"
"""


def test_python_worker_replies_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bounded_rag.py").write_text(USER_MODULE)
    spec = PythonSpec(name="py", kind="python", callable="bounded_rag:answer")
    rows = _by_id(answer_with_python("py", "external:python", spec, QA, limits=LIMITS))
    assert rows["long"]["error"] == (
        "bad return value: answer is 60,000 characters, over limits.answer_max_chars (50,000)"
    )
    assert rows["big"]["error"] == (
        "bad return value: contexts[0] is 50,001 characters, over limits.context_max_chars (50,000)"
    )
    many = rows["many"]["retrieved"]
    assert isinstance(many, list) and len(many) == 50
    assert rows["ok"]["answer"] == "fine"


def test_parquet_answers_file_is_bounded(tmp_path: Path) -> None:
    path = tmp_path / "answers.parquet"
    pl.DataFrame(
        {
            "question_id": ["long", "many", "ok"],
            "answer": ["w" * 60_000, "many", "fine"],
            "contexts": [[], MANY, ["a", "a", "b"]],
        }
    ).write_parquet(path)
    rows = _by_id(answer_from_file("team", "external:answers_file", path, QA, LIMITS))
    assert rows["long"]["error"] == (
        f"{path}: answer is 60,000 characters, over limits.answer_max_chars (50,000)"
    )
    many = rows["many"]["retrieved"]
    assert isinstance(many, list) and len(many) == 50
    ok = rows["ok"]["retrieved"]
    assert isinstance(ok, list) and [p["text"] for p in ok] == ["a", "b"]


@pytest.mark.parametrize(
    "name,text,where",
    [
        ("a.jsonl", '{"question_id": "ok", "answer": "x"}\n{"question_id": "deep", "answer": '
         + DEEP + "}\n", "line 2"),
        ("b.jsonl", '{"question_id": "ok", "answer": "x", "contexts": ' + "[" * 80 + "]" * 80
         + "}\n", "line 1"),
        ("c.csv", 'question_id,answer,contexts\nok,x,"' + DEEP + '"\n', "row 1"),
    ],
)  # fmt: skip
def test_deeply_nested_json_in_an_answers_file_is_one_line(
    tmp_path: Path, name: str, text: str, where: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(SchemaError) as info:
        read_answers_file(path, QA)
    message = str(info.value)
    assert message.startswith(f"{path}: {where}: ") and "nested deeper than" in message, message
    assert "\n" not in message
