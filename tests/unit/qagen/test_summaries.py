"""``data/qa/summary.json`` models: both shapes read back, nothing unknown slips through."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from ragcourt.qagen.summaries import ByoQASummary, QASummary, parse_qa_summary

GENERATED = {
    "requested": 3, "accepted": 1, "attempts": 4, "acceptance_rate": 0.25,
    "stop_reason": "max_attempts_reached", "max_attempts": 4, "contexts_available": 9,
    "documents_covered": 1, "rejections": {"answerability": 3},
    "judged": {"answerability": 4, "faithfulness": 1, "relevance": 1},
    "judge_below_threshold": {"answerability": 3, "faithfulness": 0, "relevance": 0},
    "judge_errors": {"answerability": 0, "faithfulness": 0, "relevance": 0},
    "judge_mean_score": {"answerability": 0.25, "faithfulness": 1.0, "relevance": None},
    "thresholds": {"answerability": 1.0, "faithfulness": 0.9, "relevance": 0.9},
    "models": {"question": "local/q", "answer": "local/a", "filter": "openai/f"},
    "prompt_version": "v1", "reference_chunking": "c512", "seed": 13,
    "filter_prompt_version": "v2", "method": "agents", "answer_types": {},
    "judge_forms": {"answerability": {"probability": 4}, "faithfulness": {"generated": 1},
                    "relevance": {"probability": 1}},
}  # fmt: skip


def test_generated_summary_round_trips() -> None:
    parsed = parse_qa_summary(GENERATED)
    assert isinstance(parsed, QASummary)
    assert parsed.models.filter == "openai/f"
    assert parsed.model_dump(mode="json") == GENERATED


def test_byo_summary_has_the_keys_the_stage_always_wrote() -> None:
    byo = ByoQASummary(requested=2, accepted=2, qa_file="mine.jsonl")
    assert byo.model_dump(mode="json") == {
        "requested": 2, "accepted": 2, "attempts": 0, "acceptance_rate": None,
        "stop_reason": "qa_file", "qa_file": "mine.jsonl", "rejections": {},
    }  # fmt: skip
    assert isinstance(parse_qa_summary(byo.model_dump(mode="json")), ByoQASummary)


@pytest.mark.parametrize(
    "bad",
    [
        {**GENERATED, "stop_reason": "bored"},
        {**GENERATED, "surprise": 1},
        {k: v for k, v in GENERATED.items() if k != "seed"},
        {**GENERATED, "accepted": "1"},  # strict: no silent coercion
    ],
)
def test_invalid_summaries_are_rejected(bad: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        parse_qa_summary(bad)
