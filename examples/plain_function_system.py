"""Route 2, ``kind: python``, with a plain function (the extractive baseline of
:mod:`examples.extractive`: BM25 + best sentence, no LLM).

ragcourt calls ``answer(question, question_id=...)`` once per question (it passes
``question_id`` because the signature names it) and reads the returned mapping: ``answer``
(str) and optional ``contexts`` (strings or ``{text, doc_id, score, char_start, char_end}``).
Returning a plain string is fine too (then the system supplied no contexts and its retrieval
metrics are reported as "no contexts supplied"). An exception becomes an error row for that
question.

    - name: my-function
      kind: python
      callable: examples.plain_function_system:answer
      inputs: [examples/extractive.py, data/chunks/c256.parquet]
"""

from __future__ import annotations

from typing import Any

from examples.extractive import shared


def answer(question: str, question_id: str) -> dict[str, Any]:
    """Answer one question from the project's chunks (question_id is unused here)."""
    return shared()(question)
