"""An HTTP system through the real answer stage against a real local server: answers, 500s,
a stall past the timeout, a retried 503; the API key (from an environment variable) never
reaches an artifact, a log line, an error row or a cache file, even when the server echoes it."""

from __future__ import annotations

import json
import logging
import shutil
import threading
import time
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import polars as pl
import pytest
import yaml

from ragcourt.answering import stage as answer
from ragcourt.core.io import read_table, write_parquet
from ragcourt.core.schemas import frame_schema
from ragcourt.orchestration.params import Params, load_params

ROOT = Path(__file__).resolve().parents[2]
SECRET = "sk-test-Zq8v1LmN0pR4"
ENV_VAR = "RAGCOURT_TEST_SERVICE_KEY"
QUESTIONS = {
    "q1": "When was the Louisiana Purchase made?",
    "q2": "Which question makes the server fail?",
    "q3": "Which question stalls the server?",
    "q4": "Which question fails once, then works?",
    "q5": 'What does the server say about "your key"?',
}


class Service(BaseHTTPRequestHandler):
    """POST /ask {"q": ..., "id": ...} -> {"result": {"text": ..., "docs": [...]}}."""

    hits: ClassVar[Counter[str]] = Counter()
    lock: ClassVar[threading.Lock] = threading.Lock()

    def log_message(self, *args: object) -> None:  # keep test output quiet
        pass

    def _send(self, status: int, payload: object) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        auth = self.headers.get("Authorization", "")
        qid = body["id"]
        with self.lock:
            self.hits[qid] += 1
            n = self.hits[qid]
        if auth != f"Bearer {SECRET}":
            return self._send(401, {"error": "bad key"})
        if body["q"] != QUESTIONS[qid]:
            return self._send(400, {"error": f"question text garbled: {body['q']!r}"})
        if qid == "q2":  # echoes the credentials back, as careless services do
            return self._send(500, {"error": f"internal error for {auth}", "trace": "x" * 500})
        if qid == "q3":
            time.sleep(3)
            return self._send(200, {"result": {"text": "too late"}})
        if qid == "q4" and n == 1:
            return self._send(503, {"error": "warming up"})
        if qid == "q5":
            return self._send(200, {"result": {"text": f"I was called with {auth}", "docs": []}})
        docs = [{"body": "The Louisiana Purchase was made in 1803.", "doc": "d1", "rel": 9.5}]
        return self._send(200, {"result": {"text": f"answer to {qid}", "docs": docs}})


@pytest.fixture
def server() -> Iterator[str]:
    Service.hits = Counter()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Service)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Params:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "configs/prompts").mkdir(parents=True)
    shutil.copy(ROOT / "configs/prompts/answer.yaml", tmp_path / "configs/prompts/answer.yaml")
    params = load_params(ROOT / "params.yaml").model_copy(deep=True)
    params.llm.cache_dir = str(tmp_path / ".cache")
    params.llm.models_file = str(ROOT / "configs/models.yaml")
    params.systems_file = "systems.yaml"
    qa = pl.DataFrame(
        {"question_id": list(QUESTIONS), "question": list(QUESTIONS.values())}
    ).with_columns(
        pl.lit(None, dtype=t).alias(c)
        for c, t in frame_schema("qa").items()
        if c not in ("question_id", "question")
    )
    write_parquet(qa, "data/qa/qa.parquet", "qa")
    monkeypatch.setenv(ENV_VAR, SECRET)
    return params


def _systems(url: str) -> None:
    system = {
        "name": "my-service",
        "kind": "http",
        "url": f"{url}/ask",
        "body": '{"q": "{question}", "id": "{question_id}"}',
        "answer_path": "result.text",
        "contexts_path": "result.docs",
        "context_fields": {"text": "body", "doc_id": "doc", "score": "rel"},
        "headers": {"Authorization": f"Bearer ${{env:{ENV_VAR}}}"},
        "timeout_s": 0.5,
        "max_retries": 2,
        "backoff_s": 0.05,
        "concurrency": 3,
    }
    Path("systems.yaml").write_text(yaml.safe_dump({"systems": [system]}))


def _leaks(root: Path) -> list[str]:
    """Files under ``root`` holding the secret, raw bytes or any decoded Parquet cell."""
    found = []
    for f in sorted(p for p in root.rglob("*") if p.is_file()):
        if SECRET.encode() in f.read_bytes():
            found.append(str(f))
        elif f.suffix == ".parquet":
            df = pl.read_parquet(f)
            if SECRET in json.dumps(df.to_dicts(), default=str) or SECRET in str(
                pl.read_parquet_metadata(f)
            ):
                found.append(f"{f} (decoded)")
    return found


def test_http_system_error_rows_retries_and_no_secret_anywhere(
    project: Params,
    server: str,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    caplog.set_level(logging.DEBUG)
    _systems(server)
    t0 = time.perf_counter()
    answer.run(project)
    assert time.perf_counter() - t0 < 20  # the stall was cut by the timeout, not waited out
    out = read_table("data/answers/answers.parquet", "answers")
    assert out["question_id"].to_list() == list(QUESTIONS)
    assert set(out["model"]) == {"external:http"}
    errors = dict(zip(out["question_id"], out["error"], strict=True))
    assert [q for q, e in errors.items() if e is not None] == ["q2", "q3"]
    assert errors["q2"].startswith(f"HTTP 500 from POST {server}/ask: ")
    assert "internal error for Bearer [redacted]" in errors["q2"]
    assert errors["q2"].endswith("(after 3 attempts)") and len(errors["q2"]) < 400
    assert errors["q3"] == "timed out after 0.5s (after 3 attempts)"
    answers = dict(zip(out["question_id"], out["answer"], strict=True))
    assert answers["q1"] == "answer to q1" and answers["q4"] == "answer to q4"
    assert answers["q5"] == "I was called with Bearer [redacted]"
    assert Service.hits == Counter({"q1": 1, "q2": 3, "q3": 3, "q4": 2, "q5": 1})
    hit = out.filter(pl.col("question_id") == "q1")["retrieved"][0][0]
    assert hit == {
        "chunk_id": "ext:my-service:q1:0",
        "rank": 1,
        "score": 9.5,
        "doc_id": "d1",
        "char_start": None,
        "char_end": None,
        "text": "The Louisiana Purchase was made in 1803.",
    }
    assert out.filter(pl.col("question_id") == "q5")["retrieved"][0].to_list() == []
    summary = json.loads(Path("data/answers/summary.json").read_text())
    assert summary["my-service"]["errors"] == 2

    # a re-run asks the server only the questions that failed
    answer.run(project)
    assert Service.hits == Counter({"q1": 1, "q2": 6, "q3": 6, "q4": 2, "q5": 1})
    out2 = read_table("data/answers/answers.parquet", "answers")
    assert out2.filter(pl.col("error").is_null())["question_id"].to_list() == ["q1", "q4", "q5"]

    logged = caplog.text + "".join(str(r.args) for r in caplog.records)
    assert "my-service: 2 of 5 questions failed" in caplog.text
    assert SECRET not in logged
    std = capfd.readouterr()
    assert SECRET not in std.out + std.err
    assert _leaks(Path.cwd()) == []


def test_unset_key_variable_is_a_one_line_error_before_any_request(
    project: Params, server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ragcourt.core.errors import ConfigError

    monkeypatch.delenv(ENV_VAR)
    _systems(server)
    with pytest.raises(ConfigError) as err:
        answer.run(project)
    assert str(err.value) == (
        f"system 'my-service': header 'Authorization' needs environment variable {ENV_VAR}, "
        "which is not set"
    )
    assert sum(Service.hits.values()) == 0
