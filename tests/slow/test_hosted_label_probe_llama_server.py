"""Relevance and UDCG through the hosted route against a REAL ``llama_cpp.server`` serving the
embedded SmolLM2-135M GGUF (``openai/...`` + ``OPENAI_API_BASE``). Its top-20 list for the
judge prompt holds neither "0" nor "2" (nor "NO"), so reading the list alone would give the
floors; the gateway probes each label instead and every row says so (``grading_method``)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from _llama_server import llama_server, missing_server_extras, smollm2_gguf

from ragcourt.judging.relevance import (
    GRADE_LEVELS,
    grade_passage_relevance,
    relevance_token_requests,
)
from ragcourt.judging.summary import grading_fallbacks
from ragcourt.judging.udcg import abstention_probabilities
from ragcourt.llm import Gateway
from ragcourt.llm.accounting import reset_accounts
from ragcourt.llm.grading_methods import is_fallback
from ragcourt.llm.next_token import from_top_logprobs
from ragcourt.llm.params import LLMParams

QA = [
    (
        "q1",
        "What is the capital of France?",
        [
            "Paris is the capital and largest city of France.",
            "France is a country in Western Europe with many large cities.",
            "Bananas are a good source of potassium.",
        ],
    ),
    (
        "q2",
        "How many legs does a spider have?",
        [
            "Spiders are arachnids with eight legs.",
            "Spiders spin webs from silk to catch insects.",
            "The stock market fell sharply on Monday.",
        ],
    ),
]
MODEL = "openai/smollm2-135m"


def _frames() -> tuple[pl.DataFrame, pl.DataFrame]:
    rows = [(q, f"c{i}", p) for q, _, ps in QA for i, p in enumerate(ps)]
    passages = pl.DataFrame(
        {
            "question_id": [r[0] for r in rows],
            "chunk_id": [r[1] for r in rows],
            "doc_id": ["d"] * len(rows),
            "text": [r[2] for r in rows],
            "n_systems": pl.Series([1] * len(rows), dtype=pl.Int32),
        }
    )
    questions = pl.DataFrame(
        {"question_id": [q for q, _, _ in QA], "question": [t for _, t, _ in QA]}
    )
    return passages, questions


@pytest.mark.skipif(bool(missing_server_extras()), reason="llama_cpp.server extras missing")
def test_hosted_relevance_is_probed_not_floored_and_flagged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reset_accounts()
    passages, questions = _frames()
    params = LLMParams(cache_dir=str(tmp_path / "cache"), metrics_dir=str(tmp_path / "m"))
    with llama_server(smollm2_gguf(), n_ctx=2048) as srv:
        monkeypatch.setenv("OPENAI_API_BASE", srv.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "none")
        gw = Gateway(params, stage="t_llama_probe")
        rel = grade_passage_relevance(passages, questions, gw, MODEL, version="v5")
        # the judge call's own top-20 (a cache hit): what the floors would have been read from
        token = relevance_token_requests(passages, questions, MODEL, "v5")
        firsts = gw.chat([r.model_copy(update={"top_logprobs": 20}) for r in token])
        udcg = abstention_probabilities(passages, questions, gw, MODEL, version="v5")
    assert all(f.ok and f.cached and f.logprobs for f in firsts)
    floors = [
        from_top_logprobs(list(GRADE_LEVELS), f.logprobs[0] if f.logprobs else None, MODEL, True)
        for f in firsts
    ]
    assert all(d.fallback for d in floors)  # the top-20 misses some grade on every row
    assert rel["error"].is_null().all() and rel["relevance"].is_in([0, 1, 2]).all()
    methods = rel["grading_method"].to_list()
    assert set(methods) <= {"label_probe", "label_probe+floor", "generated_label"}
    expected = rel["relevance_expected"].to_list()
    assert max(expected) - min(expected) > 0.02  # probed per passage, not one floor value
    flags = grading_fallbacks(methods)
    assert flags.fallback_rows == flags.rows == passages.height and flags.share == 1.0
    assert udcg["p_error"].is_null().all()
    assert all(is_fallback(m) for m in udcg["p_method"].to_list())
    print("relevance_expected", [round(x, 3) for x in expected], "methods", methods)
    print("p_no_response", [round(x, 4) for x in udcg["p_no_response"].to_list()])
    reset_accounts()
