"""RAGalyst correctness rubric: reply parsing (number forms, range) and requests."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from ragcourt.judging.correctness import RUBRIC_LEVELS, CorrectnessReply
from ragcourt.judging.llm_judges import render


@pytest.mark.parametrize(
    ("raw", "score"),
    [(0.7, 0.7), (1, 1.0), ("0.3", 0.3), ("0.5 - moderate relevance", 0.5), (0.0, 0.0)],
)
def test_correctness_reply_parses_scores(raw: object, score: float) -> None:
    reply = CorrectnessReply.model_validate({"rationale": "why", "score": raw})
    assert reply.score == pytest.approx(score)


@pytest.mark.parametrize("raw", [1.5, -0.2, "seventy", "70", None])
def test_correctness_reply_rejects_out_of_rubric_range(raw: object) -> None:
    with pytest.raises(ValidationError):
        CorrectnessReply.model_validate({"rationale": "why", "score": raw})


def test_correctness_reply_requires_rationale() -> None:
    with pytest.raises(ValidationError):
        CorrectnessReply.model_validate({"score": 0.7})


def test_correctness_reply_accepts_ragalyst_field_name() -> None:
    reply = CorrectnessReply.model_validate({"rationale": "r", "correctness_score": "0.7"})
    assert reply.score == pytest.approx(0.7)


def test_correctness_reply_fields_sort_in_generation_order() -> None:
    # a JSON-schema grammar may emit keys sorted by name: the rationale must still come first
    assert sorted(CorrectnessReply.model_json_schema()["properties"]) == ["rationale", "score"]


def test_correctness_prompt_states_every_rubric_level() -> None:
    system = render("correctness_system", "v1")
    for level in RUBRIC_LEVELS:
        assert f"{level} = " in system
