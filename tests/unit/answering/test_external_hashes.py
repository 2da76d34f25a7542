"""Freshness hashes of external systems: config as written plus the sha256 of their inputs,
never a secret value."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ragcourt.answering.external.inputs import external_config_hash, module_file
from ragcourt.answering.external.specs import AnswersFileSpec, HttpSpec, PythonSpec


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _touch_new(path: Path, text: str) -> None:
    """Rewrite with a different size (the sha256 memo keys on path, size and mtime)."""
    path.write_text(text)
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10_000_000))


def test_answers_file_hash_follows_the_file(project: Path) -> None:
    spec = AnswersFileSpec(name="a", kind="answers_file", path="ans.jsonl")
    missing = external_config_hash(spec)
    _touch_new(project / "ans.jsonl", '{"question_id": "q1", "answer": "x"}\n')
    first = external_config_hash(spec)
    assert first != missing and first == external_config_hash(spec)
    _touch_new(project / "ans.jsonl", '{"question_id": "q1", "answer": "changed"}\n')
    assert external_config_hash(spec) != first
    renamed = spec.model_copy(update={"name": "b"})
    assert external_config_hash(renamed) != external_config_hash(spec)  # its own partition


def test_python_hash_follows_module_and_inputs(project: Path) -> None:
    (project / "pkg").mkdir()
    (project / "pkg/__init__.py").write_text("")
    mod = project / "pkg/rag.py"
    _touch_new(mod, "def answer(q):\n    return q\n")
    helper = project / "helper.txt"
    _touch_new(helper, "v1")
    spec = PythonSpec(name="p", kind="python", callable="pkg.rag:answer", inputs=["helper.txt"])
    assert module_file("pkg.rag") == Path("pkg/rag.py")
    assert module_file("pkg") == Path("pkg/__init__.py")
    assert module_file("json") is None
    h0 = external_config_hash(spec)
    _touch_new(mod, "def answer(q):\n    return q.upper()\n")
    h1 = external_config_hash(spec)
    _touch_new(helper, "v2!")
    h2 = external_config_hash(spec)
    assert len({h0, h1, h2}) == 3
    tuned = spec.model_copy(update={"timeout_s": 5.0})
    assert external_config_hash(tuned) != h2  # options are config


def test_http_hash_has_no_secret_value(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = HttpSpec(
        name="h",
        kind="http",
        url="http://127.0.0.1:1/x",
        body={"q": "{question}"},
        answer_path="a",
        headers={"Authorization": "Bearer ${env:KEY_A}"},
    )
    monkeypatch.setenv("KEY_A", "first-secret")
    h1 = external_config_hash(spec)
    monkeypatch.setenv("KEY_A", "second-secret")
    assert external_config_hash(spec) == h1  # the value is not an input
    assert "secret" not in spec.model_dump_json()
