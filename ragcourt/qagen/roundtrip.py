"""Text checks of answer-first generation: SQuAD token F1 of the round trip, the reader's
reply as a phrase, and how much of its chunk a question copies.

Normalisation and token F1 are the judges' own (:mod:`ragcourt.corpus.answer_match`).
"""

from __future__ import annotations

import re

from ragcourt.corpus.answer_match import contains_reference, normalize_answer, token_f1

__all__ = [
    "clean_phrase",
    "contains_answer",
    "longest_shared_run",
    "normalize_answer",
    "numbers_agree",
    "token_f1",
]

_WORD = re.compile(r"\w+")
_LABEL = re.compile(r"^\s*(?:\*\*)?(?:answer|a|phrase)\s*[:.)-]\s*(?:\*\*)?\s*", re.I)


def contains_answer(question: str, answer: str) -> bool:
    """True when the normalised answer is a contiguous token run of the normalised question."""
    return contains_reference(question, answer)


def clean_phrase(text: str) -> str | None:
    """The reader's phrase: the first non-empty line without an 'Answer:' label, quotes or
    final punctuation; None if nothing remains."""
    for line in text.strip().splitlines():
        line = _LABEL.sub("", line).strip().strip("\"'`“”*.!;, ")
        if line:
            return line
    return None


def longest_shared_run(question: str, context: str) -> int:
    """The longest run of consecutive words (lower-cased ``\\w+``) of ``question`` that also
    occurs, consecutively, in ``context``."""
    q = [w.lower() for w in _WORD.findall(question)]
    c = [w.lower() for w in _WORD.findall(context)]
    at: dict[str, list[int]] = {}
    for j, w in enumerate(c):
        at.setdefault(w, []).append(j)
    best = 0
    for i, w in enumerate(q):
        for j in at.get(w, []):
            k = 1
            while i + k < len(q) and j + k < len(c) and q[i + k] == c[j + k]:
                k += 1
            best = max(best, k)
    return best


def numbers_agree(phrase: str, span: str) -> bool:
    """True when the normalised tokens holding a digit are the same set in both: a reader's
    "next 5 years" does not give back "next 10 years", though their token F1 is 0.67."""

    def numbers(text: str) -> set[str]:
        return {t for t in normalize_answer(text).split() if any(c.isdigit() for c in t)}

    return numbers(phrase) == numbers(span)
