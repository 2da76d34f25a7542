"""One-token graded judgments: a judge's score from next-token probabilities, or
from a generated reply when the provider has no logprobs or a rationale is wanted.

Probability form: one forward pass; at the first answer position the gateway gives
P(label) over the judge's labels (renormalised, see :mod:`ragcourt.llm.next_token`) and
score = sum_l P(l) * level(l) - P(yes) for a yes/no judge, the expected grade for a 0/1/2 or
0-4 scale. Generated form (``reason=True``, or per row when the model returned no logprobs):
the same prompt ends with the reason instruction instead and the reply is JSON
``{"reason": ..., "label": <one of the labels>}``; score = level(label). Every
:class:`Graded` names its ``form``; a failed call or reply is ``score=None`` with ``error``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ragcourt.llm import grading_methods
from ragcourt.llm.types import ChatRequest, TokenDistribution

if TYPE_CHECKING:
    from ragcourt.llm.gateway import Gateway

Form = Literal["probability", "generated"]
FORMS: tuple[Form, ...] = ("probability", "generated")
YES_NO: dict[str, float] = {"yes": 1.0, "no": 0.0}
MAX_REASON_CHARS = 300


def _no_description(schema: dict[str, Any]) -> None:
    schema.pop("description", None)


class LabelReply(BaseModel):
    """Generated-form reply: a short reason, then one label (checked against the judge's)."""

    model_config = ConfigDict(json_schema_extra=_no_description)

    reason: str = Field(json_schema_extra={"maxLength": MAX_REASON_CHARS})
    label: str

    @field_validator("label", mode="before")
    @classmethod
    def _text(cls, v: object) -> object:
        """A bare number or boolean is accepted as its text (``2`` -> ``"2"``)."""
        if isinstance(v, bool):
            return "yes" if v else "no"
        if isinstance(v, int | float) and float(v).is_integer():
            return str(int(v))
        return v.strip().strip(".!\"'").lower() if isinstance(v, str) else v


@dataclass(frozen=True)
class Graded:
    """One graded item: ``score`` (None on failure), its ``form``, ``probs`` over the labels
    (probability form) or the chosen ``label`` (generated form), a reason, the error and the
    ``method`` it was graded by (:mod:`ragcourt.llm.grading_methods`; "" when not graded)."""

    score: float | None
    form: Form
    reason: str = ""
    error: str | None = None
    probs: dict[str, float] = field(default_factory=dict)
    label: str | None = None
    raw: str = ""
    method: str = ""

    @property
    def ok(self) -> bool:
        return self.error is None and self.score is not None


def expected_level(probs: Mapping[str, float], levels: Mapping[str, float]) -> float:
    """sum_l P(l) * level(l) over ``levels``, with P renormalised over them."""
    total = sum(probs.get(c, 0.0) for c in levels)
    if not total > 0:
        raise ValueError("no probability mass on the labels")
    return sum(probs.get(c, 0.0) * v for c, v in levels.items()) / total


def _shown(probs: Mapping[str, float]) -> str:
    return " ".join(f"{c}:{p:.3f}" for c, p in probs.items())


def grade(
    gw: Gateway,
    token_reqs: Sequence[ChatRequest],
    reason_reqs: Sequence[ChatRequest],
    levels: Mapping[str, float],
    reason: bool = False,
    desc: str = "",
    dists: Sequence[TokenDistribution] | None = None,
) -> list[Graded]:
    """Grade each item: ``token_reqs[i]`` asks for one label token (probability form),
    ``reason_reqs[i]`` for the JSON reply (generated form: every item when ``reason``, else
    only items whose model returned no logprobs, with that named in the reason). ``dists``:
    the label distributions of ``token_reqs`` already asked for (e.g. in a batch shared
    with another judge, :meth:`Gateway.next_token_probs_grouped`)."""
    if len(token_reqs) != len(reason_reqs):
        raise ValueError("token and reason requests differ in number")
    if dists is not None and (reason or len(dists) != len(token_reqs)):
        raise ValueError("dists must be one per token request, and only without reason")
    out: list[Graded | None] = [None] * len(token_reqs)
    fallback: dict[int, str] = {}
    if reason:
        fallback = dict.fromkeys(range(len(reason_reqs)), "")
    elif token_reqs:
        if dists is None:
            dists = gw.next_token_probs(token_reqs, candidates=list(levels), desc=desc)
        for i, d in enumerate(dists):
            if d.no_logprobs:
                fallback[i] = f"generated form: {d.model} returned no logprobs; "
            elif not d.ok:
                err = d.error or "no next-token distribution"
                out[i] = Graded(None, "probability", error=err, method=d.method)
            else:
                why = f"P(label) {_shown(d.probs)} ({d.method})"
                if d.fallback:
                    why += f"; upper bound for {','.join(d.fallback)}"
                method = grading_methods.of_distribution(d)
                try:
                    score = expected_level(d.probs, levels)
                except ValueError as exc:  # e.g. a generated label that is none of them
                    out[i] = Graded(None, "probability", error=str(exc), method=method)
                    continue
                out[i] = Graded(score, "probability", why, probs=dict(d.probs), method=method)
    idx = sorted(fallback)
    if idx:
        results = gw.structured([reason_reqs[i] for i in idx], LabelReply, desc=desc)
        for i, res in zip(idx, results, strict=True):
            note = fallback[i]
            how = grading_methods.GENERATED_NO_LOGPROBS if note else grading_methods.GENERATED
            if not res.ok or res.value is None:
                err = note + (res.error or "no parsed reply")
                out[i] = Graded(None, "generated", error=err, raw=res.raw[:500], method=how)
            elif res.value.label not in levels:
                err = f"{note}label {res.value.label!r} is not one of {list(levels)}"
                out[i] = Graded(None, "generated", error=err, raw=res.raw[:500], method=how)
            else:
                v = res.value
                why = note + v.reason.strip()
                out[i] = Graded(levels[v.label], "generated", why, label=v.label, method=how)
    return [g if g is not None else Graded(None, "probability", error="not graded") for g in out]
