"""Lexical judges: SQuAD-normalised token F1 and DAFE's adapted exact match (containment)
(:mod:`ragcourt.corpus.answer_match`), each over the best reference (any one may match).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ragcourt.corpus.answer_match import contains_reference, normalize_answer, token_f1
from ragcourt.judging.params import JudgeSpec
from ragcourt.judging.vocabulary import (
    ANSWER_JUDGES,
    AnswerItem,
    AnswerVerdict,
    JudgeContext,
    require_threshold,
)

__all__ = [  # the matching functions are re-exported for the judges' callers
    "ContainmentJudge",
    "TokenF1Judge",
    "best_reference_f1",
    "contains_reference",
    "first_contained",
    "normalize_answer",
    "token_f1",
]


def best_reference_f1(prediction: str, references: Sequence[str]) -> tuple[float, int]:
    """Max token F1 over references and the index of the best one (-1 if none)."""
    best, idx = 0.0, -1
    for i, ref in enumerate(references):
        f1 = token_f1(prediction, ref)
        if idx < 0 or f1 > best:
            best, idx = f1, i
    return best, idx


def first_contained(prediction: str, references: Sequence[str]) -> int:
    """Index of the first reference contained in ``prediction`` or -1."""
    for i, ref in enumerate(references):
        if contains_reference(prediction, ref):
            return i
    return -1


@dataclass
class TokenF1Judge:
    """Correct when some reference is contained in the answer (adapted EM) or its token F1
    with the answer reaches ``threshold``. Score: 1.0 on containment, else the best F1."""

    name: str
    threshold: float
    uses_llm: bool = False

    def judge(self, items: Sequence[AnswerItem]) -> list[AnswerVerdict]:
        return [self._one(item) for item in items]

    def _one(self, item: AnswerItem) -> AnswerVerdict:
        if not item.references:
            return AnswerVerdict(self.name, None, error="no reference answer")
        hit = first_contained(item.answer, item.references)
        if hit >= 0:
            return AnswerVerdict(
                self.name, True, f"reference {hit + 1} is contained in the answer", 1.0
            )
        f1, idx = best_reference_f1(item.answer, item.references)
        ok = f1 >= self.threshold
        rel = ">=" if ok else "<"
        why = f"best token F1 {f1:.3f} (reference {idx + 1}) {rel} threshold {self.threshold}"
        return AnswerVerdict(self.name, ok, why, f1)


@dataclass
class ContainmentJudge:
    """DAFE's adapted exact match alone: correct iff a normalised reference is contained."""

    name: str
    uses_llm: bool = False

    def judge(self, items: Sequence[AnswerItem]) -> list[AnswerVerdict]:
        out: list[AnswerVerdict] = []
        for item in items:
            if not item.references:
                out.append(AnswerVerdict(self.name, None, error="no reference answer"))
                continue
            hit = first_contained(item.answer, item.references)
            why = (
                f"reference {hit + 1} is contained in the answer"
                if hit >= 0
                else "no reference is contained in the answer"
            )
            out.append(AnswerVerdict(self.name, hit >= 0, why, float(hit >= 0)))
        return out


@ANSWER_JUDGES.register("token_f1")
def _token_f1(name: str, spec: JudgeSpec, ctx: JudgeContext) -> TokenF1Judge:
    return TokenF1Judge(name=name, threshold=require_threshold(name, spec, 0.5))


@ANSWER_JUDGES.register("containment")
def _containment(name: str, spec: JudgeSpec, ctx: JudgeContext) -> ContainmentJudge:
    return ContainmentJudge(name=name)
