"""Route 3, ``kind: http``: a small FastAPI RAG service (the extractive baseline of
:mod:`examples.extractive`: BM25 over the project's chunks + best sentence, no LLM).

Two endpoints, one per way ragcourt can talk to a service:

* ``POST /ask`` ``{"question": ..., "question_id": ...}`` -> ``{"answer": ..., "contexts":
  [{"text", "doc_id", "score"}, ...]}`` (a custom API: ``answer_path: answer``,
  ``contexts_path: contexts``);
* ``POST /v1/chat/completions``: the OpenAI chat format (the last user message is the
  question; the answer is ``choices.0.message.content``), for the ``openai_chat`` shortcut.

When ``EXAMPLE_SERVICE_KEY`` is set, both require ``Authorization: Bearer <that key>``.
Run it from the project root (after the chunk stage), then evaluate it with
examples/systems_external.yaml:

    EXAMPLE_SERVICE_KEY=s3cret uvicorn examples.http_service:app --port 8765
"""

from __future__ import annotations

import os
import time
from typing import Any

from fastapi import FastAPI, Header, HTTPException
from pydantic import BaseModel

from examples.extractive import shared

app = FastAPI(title="example RAG service (extractive baseline, no LLM)")


class AskRequest(BaseModel):
    question: str
    question_id: str | None = None


class ChatMessage(BaseModel):
    role: str
    content: str


class ChatRequest(BaseModel):
    model: str
    messages: list[ChatMessage]
    temperature: float | None = None
    max_tokens: int | None = None


def _authorise(authorization: str | None) -> None:
    key = os.environ.get("EXAMPLE_SERVICE_KEY")
    if key and authorization != f"Bearer {key}":
        raise HTTPException(status_code=401, detail="missing or wrong API key")


@app.post("/ask")
def ask(req: AskRequest, authorization: str | None = Header(default=None)) -> dict[str, Any]:
    _authorise(authorization)
    out = shared()(req.question)
    return {
        "answer": out["answer"],
        "contexts": [
            {"text": c["text"], "doc_id": c["doc_id"], "score": c["score"]} for c in out["contexts"]
        ],
    }


@app.post("/v1/chat/completions")
def chat(req: ChatRequest, authorization: str | None = Header(default=None)) -> dict[str, Any]:
    _authorise(authorization)
    users = [m.content for m in req.messages if m.role == "user"]
    if not users:
        raise HTTPException(status_code=400, detail="no user message")
    answer = shared()(users[-1])["answer"]
    return {
        "id": "chatcmpl-example",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": req.model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": answer},
                "finish_reason": "stop",
            }
        ],
    }
