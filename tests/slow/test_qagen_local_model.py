"""Smoke test with the real embedded model (SmolLM2-135M): one candidate goes through every
agent and judge; the grammar-constrained JSON judges must parse, and the candidate must end in
exactly one of the two tables with its scores recorded."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from ragcourt.core.schemas import check
from ragcourt.llm import Gateway
from ragcourt.orchestration.params import parse_params
from ragcourt.qagen.generator import Generator
from ragcourt.qagen.stage import generate_qa, near_duplicate_encoder

ROOT = Path(__file__).resolve().parents[2]
CONTEXT = (
    "The harbour office of Valparaiso was opened in 1832. Its first director, Manuel Ortega, "
    "kept a green ledger in which every tea shipment was recorded with its weight and price."
)


@pytest.mark.slow  # ~5 local-model calls: one to several minutes on 2 shared cores
def test_one_candidate_through_the_local_model(tmp_path: Path) -> None:
    params = parse_params(
        {
            "llm": {"cache_dir": str(tmp_path / "cache"), "metrics_dir": str(tmp_path)},
            "qagen": {
                "reference_chunking": "c256",
                "n_items": 1,
                "max_attempts": 1,
                "short_circuit": False,
            },
        }
    )
    contexts = pl.DataFrame(
        {
            "source_chunk_id": ["c0"],
            "doc_id": ["d0"],
            "char_start": [0],
            "char_end": [len(CONTEXT)],
            "context": [CONTEXT],
        }
    )
    gw = Gateway(params.llm, stage="qagen")
    gen = Generator(gw, params, prompts_dir=ROOT / "configs/prompts")
    res = generate_qa(contexts, gen, near_duplicate_encoder(params))
    check(res.qa, "qa", "<qa>")
    check(res.rejected, "qa_rejected", "<qa_rejected>")
    assert res.qa.height + res.rejected.height == 1
    row = (res.qa if res.qa.height else res.rejected).row(0, named=True)
    assert row.get("failed_filter") not in ("question_generation_error", "answer_generation_error")
    if row.get("failed_filter") != "question_not_standalone":
        for judge in ("answerability", "faithfulness", "relevance"):
            assert row[f"{judge}_score"] is not None, row  # the JSON grammar reply parsed
            assert 0.0 <= row[f"{judge}_score"] <= 1.0
    assert res.summary.attempts == 1
