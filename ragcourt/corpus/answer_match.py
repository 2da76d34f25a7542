"""SQuAD answer matching on normalised text, shared by the QA generator's round trip and the
lexical judges.

Normalisation (SQuAD v1.1 evaluation script, after full-width forms are folded to ASCII so
that ``９０％`` matches ``90%``): lower-case, drop punctuation, drop the articles
a/an/the, collapse whitespace; CJK text is split into single characters and its punctuation
(CJK symbols, full-width forms) dropped, as SQuAD-style Chinese evaluations (CMRC) do. Token
F1 = 2PR/(P+R) over the bag of normalised tokens; containment = a normalised reference occurs
as a contiguous token run inside the normalised text (DAFE 3.4: r_i ⊆ ŷ).
"""

from __future__ import annotations

import re
import string
from collections import Counter

from ragcourt.corpus.language import CJK_CHAR, has_cjk

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation)
# full-width ASCII (U+FF01..U+FF5E) -> ASCII and the ideographic space -> space: 1:1 in length
_FOLD = {c: c - 0xFEE0 for c in range(0xFF01, 0xFF5F)} | {0x3000: 0x20}
_CJK_PUNCT = re.compile(r"[\u3000-\u303f\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65]")


def fold_width(text: str) -> str:
    """Full-width ASCII forms (``２０２５``, ``％``) as ASCII and the ideographic space as a
    space, one character for one (offsets are kept)."""
    return text.translate(_FOLD)


def normalize_answer(text: str) -> str:
    """SQuAD normalisation after :func:`fold_width`: lower, strip punctuation and articles,
    single spaces; each CJK character is its own token (text without CJK or full-width forms
    is normalised exactly as SQuAD's)."""
    text = fold_width(text).lower().translate(_PUNCT)
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
