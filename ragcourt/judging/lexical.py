"""Lexical judges: SQuAD-normalised token F1 and DAFE's adapted exact match (containment).

Normalisation (SQuAD v1.1 evaluation script): lower-case, drop punctuation, drop the
articles a/an/the, collapse whitespace; CJK text is split into single characters and
its punctuation (CJK symbols, full-width forms) dropped, as SQuAD-style Chinese evaluations
(CMRC) do. Token F1 = 2PR/(P+R) over the bag of normalised
tokens; containment = a normalised reference occurs as a contiguous token run inside the
normalised answer (DAFE 3.4: r_i ⊆ ŷ). Both take the best reference (any one may match).
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from ragcourt.core.params import JudgeSpec
from ragcourt.corpus.language import CJK_CHAR, has_cjk
from ragcourt.judging.vocabulary import (
    ANSWER_JUDGES,
    AnswerItem,
    AnswerVerdict,
    JudgeContext,
    require_threshold,
)

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation)
_CJK_PUNCT = re.compile(r"[\u3000-\u303f\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65]")


def normalize_answer(text: str) -> str:
    """SQuAD normalisation: lower, strip punctuation and articles, single spaces; each CJK
    character is its own token (text without CJK is normalised exactly as SQuAD's)."""
    text = text.lower().translate(_PUNCT)
    if has_cjk(text):
        text = CJK_CHAR.sub(lambda m: f" {m.group(0)} ", _CJK_PUNCT.sub(" ", text))
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def token_f1(prediction: str, reference: str) -> float:
    """SQuAD token F1 between two strings after :func:`normalize_answer` (0 if either empty)."""
    pred = normalize_answer(prediction).split()
    ref = normalize_answer(reference).split()
    if not pred or not ref:
        return 0.0
    common = Counter(pred) & Counter(ref)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision = same / len(pred)
    recall = same / len(ref)
    return 2 * precision * recall / (precision + recall)


def contains_reference(prediction: str, reference: str) -> bool:
    """DAFE's adapted EM: the normalised reference is a contiguous token run of the answer."""
    ref = normalize_answer(reference)
    if not ref:
        return False
    return f" {ref} " in f" {normalize_answer(prediction)} "


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
