"""The hosted route against a REAL ``llama_cpp.server`` serving the embedded SmolLM2-135M:
the same replies and the same reply cache at per-model concurrency 1 and 4."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from ragcourt.llm import ChatRequest, Gateway
from ragcourt.llm.accounting import reset_accounts
from ragcourt.llm.cache import STORE_NAME
from ragcourt.llm.params import LLMParams

MODEL = "openai/smollm2-135m"
QUESTIONS = [
    "What is the capital of France?",
    "Name a primary colour.",
    "How many legs does a spider have?",
    "What does a thermometer measure?",
    "Which planet is closest to the sun?",
    "What do bees make?",
]


def _cache(folder: Path) -> dict[str, str]:
    conn = sqlite3.connect(folder / STORE_NAME)
    try:
        return dict(conn.execute("SELECT key, value FROM replies").fetchall())
    finally:
        conn.close()


def test_real_llama_server_gives_the_same_replies_at_concurrency_1_and_4(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from _llama_server import llama_server, missing_server_extras, smollm2_gguf

    missing = missing_server_extras()
    if missing:
        pytest.skip(f"llama_cpp.server needs {missing}")
    reqs = [
        ChatRequest.of(MODEL, "Answer in one short sentence.", q, max_tokens=24, seed=0)
        for q in QUESTIONS
    ]
    texts: dict[int, list[str]] = {}
    with llama_server(
        smollm2_gguf(), n_ctx=1024, n_threads=1
    ) as srv:  # 1: robust on a busy machine
        monkeypatch.setenv("OPENAI_API_BASE", srv.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-no-key-needed-locally")
        for c in (1, 4):
            reset_accounts()
            params = LLMParams(
                cache_dir=str(tmp_path / str(c)),
                metrics_dir=str(tmp_path / "m"),
                concurrency_per_model={"local/": 1, "openai/": c},
            )
            res = Gateway(params, stage="t_llama_server").chat(reqs)
            assert all(r.ok for r in res), [r.error for r in res if not r.ok]
            texts[c] = [r.text for r in res]
    reset_accounts()
    assert all(t.strip() for t in texts[1])
    assert len(set(texts[1])) > 1  # replies belong to their own questions
    assert texts[1] == texts[4]
    assert _cache(tmp_path / "1") == _cache(tmp_path / "4")
