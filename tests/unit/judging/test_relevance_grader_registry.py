"""Relevance graders are a registry: ``judge.relevance_grader`` names a registered kind."""

from __future__ import annotations

import pytest

from ragcourt.core.errors import ConfigError
from ragcourt.judging.builders import build_relevance_grader, check_judge_params
from ragcourt.judging.relevance_graders import LLMRelevanceGrader
from ragcourt.judging.vocabulary import RELEVANCE_GRADER, RELEVANCE_GRADERS, JudgeContext
from ragcourt.orchestration.params import Params


def test_llm_kind_builds_the_llm_grader_and_unknown_kinds_are_one_line() -> None:
    assert Params().judge.relevance_grader is None  # params.yaml's: the registry's default
    assert RELEVANCE_GRADER.kind(Params()) == RELEVANCE_GRADERS.default() == "trained"
    p = Params.model_validate({"judge": {"relevance_grader": "llm"}})
    assert "llm" in RELEVANCE_GRADERS.kinds()
    grader = build_relevance_grader(JudgeContext(p, stage="t_relevance_registry"))
    assert isinstance(grader, LLMRelevanceGrader)
    bad = Params.model_validate({"judge": {"relevance_grader": "[/red]nope"}})
    with pytest.raises(ConfigError) as err:
        check_judge_params(bad.judge)
    msg = str(err.value)
    assert "\n" not in msg and "judge.relevance_grader" in msg and "registered: llm" in msg


def test_llm_grader_asks_tokens_only_in_the_probability_form() -> None:
    import polars as pl

    passages = pl.DataFrame(
        {"question_id": ["q1"], "chunk_id": ["c1"], "doc_id": ["d1"], "text": ["Port Elin."]}
    ).with_columns(pl.lit(1).alias("n_systems"))
    qa = pl.DataFrame({"question_id": ["q1"], "question": ["Where is the harbour?"]})
    one = Params.model_validate({"judge": {"prompt_version": "v5"}})
    reqs = LLMRelevanceGrader(JudgeContext(one, stage="t_rel")).token_requests(passages, qa)
    assert reqs is not None and len(reqs[0]) == 1 and reqs[1] == ["0", "1", "2"]
    written = Params.model_validate({"judge": {"prompt_version": "v5", "reason": True}})
    assert (
        LLMRelevanceGrader(JudgeContext(written, stage="t_rel")).token_requests(passages, qa)
        is None
    )
