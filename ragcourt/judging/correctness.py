"""Answer correctness by the LLM graders and the similarity grader (spec §5).

``judge.correctness_mode: rubric`` (RAGalyst): the model grades the candidate against the
reference answer(s) on 0.0-1.0 with the anchored rubric 0 / 0.3 / 0.5 / 0.7 / 1.0, in a JSON
reply with the rationale first (:func:`grade_correctness`). The scale is continuous with those
anchor levels, so any score in [0, 1] is kept as given (a JSON number, or the first number of a
string such as "0.7 - minor omissions"); a value outside [0, 1] or no number is a parse
failure -> error row with null correctness.

``correctness_mode: expected`` (:func:`grade_correctness_expected`) asks for the rubric level
as one digit and scores E[level] = sum_i P(digit i) * level_i from next-token probabilities
(G-Eval-style probability weighting): no generation, and a continuous score from a small local
model whose greedy rubric reply barely varies. From prompt v2 a model without logprobs (or
``judge.reason``) gives the generated digit instead; each grade names its ``form`` and its
``method`` (:mod:`ragcourt.llm.grading_methods`; e.g. ``label_probe`` when a hosted model's
top logprobs miss a digit).

``correctness_mode: similarity`` (:func:`similarity_correctness`) uses no LLM: the score is
the max cosine similarity of the answer to a reference under the embedding_similarity judge
``judge.correctness_judge``, clipped to [0, 1].

The default, ``correctness_mode: trained`` (no LLM either), is the trained correctness judge
of :mod:`ragcourt.judging.trained_correctness`. Each mode is a correctness grader of
:mod:`ragcourt.judging.graders` registered under its name in ``CORRECTNESS_GRADERS``
(:mod:`ragcourt.judging.vocabulary`); :func:`ragcourt.judging.builders.build_grader` builds
the one ``judge.correctness_mode`` names.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pydantic import AliasChoices, Field, field_validator

from ragcourt.judging.llm_judges import (
    ReplyModel,
    ask_requests,
    item_fields,
    one_token,
    prompt_requests,
    reason_field,
)
from ragcourt.judging.vocabulary import (
    AnswerItem,
    AnswerVerdict,
    CorrectnessGrade,
)
from ragcourt.llm import grading_methods
from ragcourt.llm.graded import grade

if TYPE_CHECKING:
    from ragcourt.llm import ChatRequest, Gateway

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


def correctness_requests(
    items: Sequence[AnswerItem],
    model: str,
    version: str,
    temperature: float,
    seed: int | None = 0,
) -> list[ChatRequest]:
    """One rubric-grading request per item (``seed`` = ``llm.seed``)."""
    return prompt_requests(
        "correctness", version, model, map(item_fields, items), max_tokens=256,
        temperature=temperature,
        seed=seed, json_mode=True, tag="judge.correctness",
    )  # fmt: skip


def grade_correctness(
    items: Sequence[AnswerItem],
    gateway: Gateway,
    model: str,
    version: str = "v1",
    temperature: float = 0.0,
    seed: int | None = 0,
) -> list[CorrectnessGrade]:
    """Grade every item through the gateway; failures become results with ``error``."""
    if not items:
        return []
    reqs = correctness_requests(items, model, version, temperature, seed)
    out: list[CorrectnessGrade] = []
    for res in gateway.structured(reqs, CorrectnessReply, desc="correctness"):
        if res.ok and res.value is not None:
            out.append(
                CorrectnessGrade(
                    res.value.score,
                    res.value.rationale,
                    None,
                    "generated",
                    grading_methods.GENERATED,
                )
            )
        else:
            err = res.error or "no parsed reply"
            out.append(
                CorrectnessGrade(None, res.raw[:500], err, "generated", grading_methods.GENERATED)
            )
    return out


DIGITS = tuple(str(i) for i in range(len(RUBRIC_LEVELS)))  # "0".."4" -> RUBRIC_LEVELS
DIGIT_LEVELS = dict(zip(DIGITS, RUBRIC_LEVELS, strict=True))


def expected_score(probs: dict[str, float]) -> float:
    """Probability-weighted rubric score: sum_i P(digit i) * RUBRIC_LEVELS[i] (probs over the
    five digits, renormalised to sum to 1)."""
    total = sum(probs.get(d, 0.0) for d in DIGITS)
    if not total > 0:
        raise ValueError("no probability mass on the rubric digits")
    weighted = zip(DIGITS, RUBRIC_LEVELS, strict=True)
    return sum(probs.get(d, 0.0) * lvl for d, lvl in weighted) / total


def expected_requests(
    items: Sequence[AnswerItem], model: str, version: str, seed: int | None = 0
) -> list[ChatRequest]:
    """One digit-rubric request per item; only the first answer token's distribution is read."""
    return prompt_requests(
        "correctness_digit", version, model, map(item_fields, items), max_tokens=1,
        temperature=0.0, seed=seed,
        tag="judge.correctness_expected",
    )  # fmt: skip


def grade_correctness_expected(
    items: Sequence[AnswerItem],
    gateway: Gateway,
    model: str,
    version: str = "v1",
    seed: int | None = 0,
    reason: bool = False,
    temperature: float = 0.0,
) -> list[CorrectnessGrade]:
    """G-Eval-style correctness: score = E[level] under the model's next-token distribution
    over the digits 0-4 (levels 0 / 0.3 / 0.5 / 0.7 / 1.0). Continuous even for a small model
    whose greedy reply is always the same level. From prompt v2 (fenced fields) a model
    without logprobs, or ``reason``, gives the generated digit (form ``generated``); with v1
    a model without logprobs gives its greedy digit (method ``generated_label``)."""
    if not items:
        return []
    if one_token("correctness_digit", version):
        fields = [item_fields(it) for it in items]
        token, reason_reqs = ask_requests(
            "correctness_digit", version, model, fields, "judge.correctness_expected",
            temperature, seed,
        )  # fmt: skip
        return [
            CorrectnessGrade(
                g.score, g.reason if g.ok else g.raw, g.error, g.form, g.method or None
            )
            for g in grade(gateway, token, reason_reqs, DIGIT_LEVELS, reason, "correctness")
        ]
    reqs = expected_requests(items, model, version, seed)
    out: list[CorrectnessGrade] = []
    for dist in gateway.next_token_probs(reqs, candidates=list(DIGITS), desc="correctness"):
        method = grading_methods.of_distribution(dist)
        if not dist.ok:
            err = dist.error or "no next-token distribution"
            out.append(CorrectnessGrade(None, "", err, "probability", method))
            continue
        shown = " ".join(f"{d}:{dist.probs.get(d, 0.0):.2f}" for d in DIGITS)
        why = f"expected rubric level from P(digit) {shown} ({dist.method})"
        if dist.fallback:
            why += f"; upper-bound fallback for {','.join(dist.fallback)}"
        out.append(CorrectnessGrade(expected_score(dist.probs), why, None, "probability", method))
    return out


def similarity_correctness(verdicts: Sequence[AnswerVerdict]) -> list[CorrectnessGrade]:
    """Correctness = clip(max_ref cos(e(answer), e(ref)), 0, 1) from an embedding_similarity
    judge's verdicts (their scores); a judge error becomes an error result."""
    out: list[CorrectnessGrade] = []
    for v in verdicts:
        if v.error or v.score is None:
            out.append(CorrectnessGrade(None, "", v.error or "no similarity score"))
            continue
        score = min(1.0, max(0.0, float(v.score)))
        out.append(CorrectnessGrade(score, f"max cosine to a reference {v.score:.3f}"))
    return out
