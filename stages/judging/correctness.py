"""Answer correctness (RAGalyst, SPEC 5): an LLM grades the candidate against the reference
answer(s) on 0.0-1.0 with the anchored rubric 0 / 0.3 / 0.5 / 0.7 / 1.0, rationale first.

RAGalyst's scale is continuous with those anchor levels, so any reply in [0, 1] is kept as
given (a bare number, a JSON number or a numeric string such as "0.7 - minor omissions");
a value outside [0, 1] or no number is a parse failure -> error row with null correctness.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic import AliasChoices, Field, field_validator

from stages.judging.base import JudgeItem
from stages.judging.llm_judges import (
    NO_QUESTION,
    ReplyModel,
    format_references,
    reason_field,
    render,
)

if TYPE_CHECKING:
    from stages.llm import ChatRequest, Gateway

RUBRIC_LEVELS = (0.0, 0.3, 0.5, 0.7, 1.0)
_NUMBER = re.compile(r"[-+]?\d*\.?\d+")


class CorrectnessReply(ReplyModel):
    """The grader's JSON reply: rationale first, then the score in [0, 1]. (Field names sort
    alphabetically in generation order, since a schema grammar may order keys by name.)"""

    rationale: str = reason_field()
    score: float = Field(validation_alias=AliasChoices("score", "correctness_score"))

    @field_validator("score", mode="before")
    @classmethod
    def _number(cls, v: object) -> object:
        if isinstance(v, str):
            m = _NUMBER.search(v)
            if m is None:
                raise ValueError(f"no number in score {v!r}")
            return float(m.group())
        return v

    @field_validator("score")
    @classmethod
    def _in_range(cls, v: float) -> float:
        if not 0.0 <= v <= 1.0:
            raise ValueError(f"score {v} is outside [0, 1]")
        return v


@dataclass(frozen=True)
class CorrectnessResult:
    """One graded answer: ``score`` in [0, 1] or None with ``error``."""

    score: float | None
    rationale: str
    error: str | None = None


def correctness_requests(
    items: Sequence[JudgeItem],
    model: str,
    version: str,
    temperature: float,
    seed: int | None = 0,
) -> list[ChatRequest]:
    """One rubric-grading request per item (``seed`` = ``llm.seed``)."""
    from stages.llm import ChatRequest

    system = render("correctness_system", version)
    return [
        ChatRequest.of(
            model,
            system,
            render(
                "correctness_user",
                version,
                question=it.question or NO_QUESTION,
                references=format_references(it.references),
                answer=it.answer,
            ),
            max_tokens=256,
            temperature=temperature,
            seed=seed,
            json_mode=True,
            tag="judge.correctness",
        )
        for it in items
    ]


def grade_correctness(
    items: Sequence[JudgeItem],
    gateway: Gateway,
    model: str,
    version: str = "v1",
    temperature: float = 0.0,
    seed: int | None = 0,
) -> list[CorrectnessResult]:
    """Grade every item through the gateway; failures become results with ``error``."""
    if not items:
        return []
    reqs = correctness_requests(items, model, version, temperature, seed)
    out: list[CorrectnessResult] = []
    for res in gateway.structured(reqs, CorrectnessReply, desc="correctness"):
        if res.ok and res.value is not None:
            out.append(CorrectnessResult(res.value.score, res.value.rationale))
        else:
            out.append(CorrectnessResult(None, res.raw[:500], res.error or "no parsed reply"))
    return out
