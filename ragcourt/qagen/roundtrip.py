"""Text checks of answer-first generation: SQuAD token F1 of the round trip, the reader's
reply as a phrase, and how much of its chunk a question copies.

Normalisation is the SQuAD v1.1 evaluation script's (lower-case, no punctuation, no articles,
single spaces), the same as :func:`ragcourt.judging.lexical.normalize_answer` for text without
CJK characters (qagen may not import judging; a unit test keeps the two in step).
"""

from __future__ import annotations

import re
import string
from collections import Counter

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation)
_WORD = re.compile(r"\w+")
_LABEL = re.compile(r"^\s*(?:\*\*)?(?:answer|a|phrase)\s*[:.)-]\s*(?:\*\*)?\s*", re.I)


def normalize_answer(text: str) -> str:
    """SQuAD v1.1 normalisation: lower, strip punctuation and articles, single spaces."""
    text = _ARTICLES.sub(" ", text.lower().translate(_PUNCT))
    return " ".join(text.split())


def token_f1(prediction: str, reference: str) -> float:
    """SQuAD token F1 of two strings after :func:`normalize_answer` (0 if either is empty)."""
    pred, ref = normalize_answer(prediction).split(), normalize_answer(reference).split()
    same = sum((Counter(pred) & Counter(ref)).values())
    if not pred or not ref or same == 0:
        return 0.0
    p, r = same / len(pred), same / len(ref)
    return 2 * p * r / (p + r)


def contains_answer(question: str, answer: str) -> bool:
    """True when the normalised answer is a contiguous token run of the normalised question."""
    ans = normalize_answer(answer)
    return bool(ans) and f" {ans} " in f" {normalize_answer(question)} "


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
