"""A secret in an HTTP system's URL (userinfo, ``api_key`` / ``token`` / ``sig`` query values)
never reaches a log line (caplog, the stage process's stderr) or a written artifact, against a
real local HTTP server, in process and through ``python -m stages answer``."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import polars as pl
import pytest
import yaml

from ragcourt.answering import stage as answer
from ragcourt.core.io import read_table, write_parquet
from ragcourt.core.schemas import frame_schema
from ragcourt.orchestration.params import Params, load_params

ROOT = Path(__file__).resolve().parents[2]
SECRETS = ["Kq7secretKEY", "Tz9secretTOKEN", "Sg3secretSIG", "Pw5secretPASS"]
QUESTIONS = {"q1": "Who bought Louisiana?", "q2": "Which question makes the server fail?"}


class Service(BaseHTTPRequestHandler):
    """POST /ask?api_key=..&token=..&sig=.. {"q", "id"} -> {"text"}; q2 -> HTTP 404."""

    def log_message(self, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        query = parse_qs(urlsplit(self.path).query)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        ok = query.get("api_key") == [SECRETS[0]] and body["id"] != "q2"
        data = json.dumps({"text": f"answer to {body['id']}"} if ok else {"error": "no"}).encode()
        self.send_response(200 if ok else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Service)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: str) -> Params:
    monkeypatch.chdir(tmp_path)
    params = load_params(ROOT / "params.yaml").model_copy(deep=True)
    params.llm.cache_dir = str(tmp_path / ".cache")
    params.llm.models_file = str(ROOT / "configs/models.yaml")
    params.llm.metrics_dir = "data/metrics"
    params.systems_file = "systems.yaml"
    Path("params.yaml").write_text(yaml.safe_dump(params.model_dump(mode="json")))
    (tmp_path / "configs/prompts").mkdir(parents=True)
    (tmp_path / "configs/prompts/answer.yaml").write_bytes(
        (ROOT / "configs/prompts/answer.yaml").read_bytes()
    )
    qa = pl.DataFrame({"question_id": list(QUESTIONS), "question": list(QUESTIONS.values())})
    qa = qa.with_columns(
        pl.lit(None, dtype=t).alias(c) for c, t in frame_schema("qa").items() if c not in qa.columns
    )
    write_parquet(qa, "data/qa/qa.parquet", "qa")
    url = (
        f"http://reader:{SECRETS[3]}@{server}/ask"
        f"?api_key={SECRETS[0]}&token={SECRETS[1]}&x-amz-sig={SECRETS[2]}&lang=en"
    )
    system = {
        "name": "svc",
        "kind": "http",
        "url": url,
        "body": '{"q": "{question}", "id": "{question_id}"}',
        "answer_path": "text",
        "max_retries": 0,
    }
    Path("systems.yaml").write_text(yaml.safe_dump({"systems": [system]}))
    return params


def _leaks(root: Path) -> list[str]:
    """Files under ``root`` holding a secret, raw bytes or any decoded Parquet cell."""
    found = []
    for f in sorted(p for p in root.rglob("*") if p.is_file()):
        text = f.read_bytes().decode("utf-8", "replace")
        if f.suffix == ".parquet":
            text += json.dumps(pl.read_parquet(f).to_dicts(), default=str)
            text += str(pl.read_parquet_metadata(f))
        found += [f"{f}: {s}" for s in SECRETS if s in text and f.name != "systems.yaml"]
    return found


def _check_answers() -> None:
    out = read_table("data/answers/answers.parquet", "answers")
    assert out["answer"].to_list() == ["answer to q1", None]  # the key did reach the server
    error = out["error"][1]
    assert "HTTP 404" in error and "api_key=***" in error and "***@127.0.0.1" in error


def test_url_secrets_stay_out_of_caplog_and_artifacts(
    project: Params, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.DEBUG)
    logging.getLogger("httpx").info("HTTP Request: POST http://u:%s@h/?key=%s", *SECRETS[2:4])
    answer.run(project)
    _check_answers()
    logged = caplog.text + "".join(f"{r.msg} {r.args}" for r in caplog.records)
    assert "***" in logged
    assert [s for s in SECRETS if s in logged] == []
    std = capfd.readouterr()
    assert [s for s in SECRETS if s in std.out + std.err] == []
    assert _leaks(Path.cwd()) == []


def test_url_secrets_stay_out_of_the_stage_process_stderr(project: Params) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "stages", "answer"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode in (0, 3), proc.stderr
    assert "svc" in proc.stderr
    assert [s for s in SECRETS if s in proc.stdout + proc.stderr] == []
    _check_answers()
    assert _leaks(Path.cwd()) == []
