"""Answer-first generation with the real embedded model (SmolLM2-135M) on a one-chunk corpus:
two span candidates go through writer and reader, each ends in exactly one table with its
span located in the document, its type and, once read back, its round-trip F1."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from ragcourt.core.schemas import check
from ragcourt.llm import Gateway
from ragcourt.orchestration.params import parse_params
from ragcourt.qagen.answer_first import AnswerFirstGenerator, span_contexts
from ragcourt.qagen.stage import generate_qa

ROOT = Path(__file__).resolve().parents[2]
CONTEXT = (
    "The harbour office of Valparaiso was opened in 1832. Its first director, Manuel Ortega, "
    "kept a green ledger in which every tea shipment was recorded with its weight and price."
)


def _one_hot(texts: list[str]) -> np.ndarray:
    return np.eye(max(len(texts), 1), 64, dtype=np.float32)[: len(texts)]


@pytest.mark.slow  # 53 s on 2 shared cores (model load + 4 local-model calls)
def test_answer_first_on_a_tiny_corpus_with_the_local_model(tmp_path: Path) -> None:
    params = parse_params(
        {
            "llm": {"cache_dir": str(tmp_path / "cache"), "metrics_dir": str(tmp_path)},
            "qagen": {"reference_chunking": "c256", "method": "answer_first", "n_items": 2,
                      "max_attempts": 2, "answer_first": {"spans_per_chunk": 2}},
        }
    )  # fmt: skip
    contexts = pl.DataFrame(
        {"source_chunk_id": ["c0"], "doc_id": ["d0"], "char_start": [0],
         "char_end": [len(CONTEXT)], "context": [CONTEXT]}
    )  # fmt: skip
    spans = span_contexts(contexts, params.qagen)
    assert spans.frame.height == 2
    gen = AnswerFirstGenerator(
        Gateway(params.llm, stage="qagen"), params, prompts_dir=ROOT / "configs/prompts"
    )
    res = generate_qa(spans.frame, gen, _one_hot)
    check(res.qa, "qa", "<qa>")
    check(res.rejected, "qa_rejected", "<qa_rejected>")
    assert res.qa.height + res.rejected.height == 2
    rows = [*res.qa.iter_rows(named=True), *res.rejected.iter_rows(named=True)]
    for row in rows:
        span = CONTEXT[row["answer_start"] : row["answer_end"]]
        assert span and row["answer_type"]
        assert row.get("reference_answers", [span])[0] == span
        assert row.get("failed_filter") != "question_generation_error" or row["raw_output"]
        if row.get("failed_filter") in (None, "roundtrip_mismatch"):
            assert row["roundtrip_f1"] is not None
    assert res.summary.attempts == 2
