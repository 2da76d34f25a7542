"""Lexical features of a text pair: stemmed content-word overlap (plain and IDF-weighted), the
best sentence's share, a BM25 score with a fixed IDF table, named-entity and number overlap,
negation and question-type/answer-type cues. Pure functions of the two texts and the table;
sums over word sets are exact (``math.fsum``), so no feature depends on the order a set is
iterated in (the process's string hash seed)."""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

import Stemmer

_WORD = re.compile(r"\w+", re.UNICODE)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
_YEAR = re.compile(r"\b(?:1[0-9]{3}|20[0-9]{2})\b")
_CAPITALISED = re.compile(r"\b[A-Z][\w-]+")
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "in",
        "on",
        "at",
        "to",
        "for",
        "from",
        "by",
        "with",
        "and",
        "or",
        "but",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "why",
        "how",
        "did",
        "does",
        "do",
        "done",
        "that",
        "this",
        "these",
        "those",
        "it",
        "its",
        "as",
        "into",
        "than",
        "then",
        "there",
        "their",
        "they",
        "he",
        "she",
        "his",
        "her",
        "him",
        "i",
        "you",
        "we",
        "our",
        "your",
        "can",
        "could",
        "would",
        "should",
        "will",
        "may",
        "might",
        "must",
        "has",
        "have",
        "had",
        "about",
        "over",
        "after",
        "before",
        "during",
        "between",
        "also",
        "such",
        "some",
        "any",
        "each",
        "other",
        "one",
    ]
)
NEGATIONS = frozenset(
    ["not", "never", "no", "nobody", "none", "nothing", "neither", "nor", "without", "cannot"]
)
QUESTION_TYPES = ("how many", "how much", "when", "what year", "who", "where", "why", "how")
BM25_K1, BM25_B, BM25_AVG_LEN = 1.2, 0.75, 120.0


@cache
def _stemmer() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("english")


def words(text: str) -> list[str]:
    """Lower-cased word tokens (``\\w+``)."""
    return [w.lower() for w in _WORD.findall(text)]


def content_stems(text: str) -> list[str]:
    """Snowball stems of the non-stopword tokens, in order."""
    stem = _stemmer().stemWord
    return [stem(w) for w in words(text) if w not in STOPWORDS]


@dataclass(frozen=True)
class IdfTable:
    """Robertson IDF ``log((N - df + 0.5) / (df + 0.5) + 1)`` per stem of a fixed corpus of
    ``n_docs`` documents; an unseen stem gets the IDF of df = 0."""

    n_docs: int
    idf: dict[str, float]

    @property
    def unseen(self) -> float:
        return math.log((self.n_docs + 0.5) / 0.5 + 1.0)

    def of(self, stem: str) -> float:
        return self.idf.get(stem, self.unseen)

    @classmethod
    def fit(cls, documents: Iterable[str], min_df: int = 2) -> IdfTable:
        """The table of ``documents``; stems in fewer than ``min_df`` documents are left out
        (they score as unseen, within a hair of their own IDF)."""
        df: Counter[str] = Counter()
        n = 0
        for doc in documents:
            df.update(set(content_stems(doc)))
            n += 1
        return cls(
            n_docs=n,
            idf={
                w: round(math.log((n - c + 0.5) / (c + 0.5) + 1.0), 4)
                for w, c in sorted(df.items())
                if c >= min_df
            },
        )


def _capitalised(text: str) -> set[str]:
    """Capitalised words after the first word, and numbers: a cheap named-entity proxy."""
    found = _CAPITALISED.findall(text)
    return {w.lower() for w in found[1:]} | set(_NUMBER.findall(text))


def question_type(question: str) -> str:
    """The first matching wh-phrase of :data:`QUESTION_TYPES`, else ``other``."""
    q = question.lower()
    return next((t for t in QUESTION_TYPES if t in q), "other")


QUESTION_PASSAGE_FEATURES: tuple[str, ...] = (
    "overlap",
    "overlap_idf",
    "bigram_overlap",
    "entity_overlap",
    "best_sentence_idf",
    "best_two_sentences_idf",
    "missing_idf_max",
    "n_missing",
    "bm25",
    "passage_log_len",
    "no_entities",
    "type_number_match",
    "type_year_match",
    "type_who_match",
    "question_negated_passage_not",
    *(f"qtype_{t.replace(' ', '_')}" for t in (*QUESTION_TYPES, "other")),
)


def bm25_of_stems(q_set: set[str], p_stems: list[str], idf: IdfTable) -> float:
    """BM25 of a passage's stems for a question's stem set, IDF from the fixed table:
    sum_t idf(t) * tf(t) * (k1 + 1) / (tf(t) + k1 * (1 - b + b * |p| / avg_len))."""
    tf = Counter(p_stems)
    norm = BM25_K1 * (1 - BM25_B + BM25_B * len(p_stems) / BM25_AVG_LEN)
    return math.fsum(idf.of(t) * tf[t] * (BM25_K1 + 1) / (tf[t] + norm) for t in q_set if t in tf)


def question_passage_features(question: str, passage: str, idf: IdfTable) -> list[float]:
    """The :data:`QUESTION_PASSAGE_FEATURES` of one (question, passage) pair, in order."""
    q_stems = content_stems(question)
    p_stems = content_stems(passage)
    q_set, p_set = set(q_stems), set(p_stems)
    weight = {t: idf.of(t) for t in q_set}
    total = math.fsum(weight.values()) or 1.0
    missing = [t for t in q_set if t not in p_set]
    q_bigrams = set(itertools.pairwise(q_stems))
    p_bigrams = set(itertools.pairwise(p_stems))
    entities = _capitalised(question)
    lowered = passage.lower()
    sentences = [set(content_stems(s)) for s in _SENTENCE.split(passage)] or [set()]
    best = max(math.fsum(weight[t] for t in q_set if t in s) for s in sentences) / total
    pairs = [a | b for a, b in itertools.pairwise(sentences)] or sentences
    best_two = max(math.fsum(weight[t] for t in q_set if t in s) for s in pairs) / total
    bm25 = bm25_of_stems(q_set, p_stems, idf)
    qtype = question_type(question)
    has_number = bool(_NUMBER.search(passage))
    has_year = bool(_YEAR.search(passage))
    has_names = len(_capitalised(passage)) > 0
    q_negated = any(w in NEGATIONS for w in words(question))
    p_negated = any(w in NEGATIONS for w in words(passage))
    return [
        len(q_set & p_set) / max(1, len(q_set)),
        math.fsum(weight[t] for t in q_set if t in p_set) / total,
        len(q_bigrams & p_bigrams) / max(1, len(q_bigrams)),
        sum(1 for e in entities if e in lowered) / max(1, len(entities)),
        best,
        best_two,
        max((weight[t] for t in missing), default=0.0) / idf.unseen,
        float(len(missing)),
        bm25 / (1 + len(q_set)),
        math.log1p(len(p_stems)),
        float(not entities),
        float(qtype in ("how many", "how much") and has_number),
        float(qtype in ("when", "what year") and has_year),
        float(qtype == "who" and has_names),
        float(q_negated and not p_negated),
        *(float(qtype == t) for t in (*QUESTION_TYPES, "other")),
    ]


ANSWER_REFERENCE_FEATURES: tuple[str, ...] = (
    "answer_covers_reference_idf",
    "reference_covers_answer_idf",
    "overlap_f1_idf",
    "jaccard",
    "number_mismatch",
    "negation_mismatch",
    "log_length_ratio",
)


def answer_reference_features(answer: str, reference: str, idf: IdfTable) -> list[float]:
    """The :data:`ANSWER_REFERENCE_FEATURES` of one (answer, reference) pair, in order."""
    a, r = set(content_stems(answer)), set(content_stems(reference))
    common = a & r
    wa = math.fsum(idf.of(t) for t in a) or 1.0
    wr = math.fsum(idf.of(t) for t in r) or 1.0
    shared = math.fsum(idf.of(t) for t in common)
    covers_ref, covers_ans = shared / wr, shared / wa
    f1 = 2 * covers_ref * covers_ans / (covers_ref + covers_ans) if shared else 0.0
    nums_a, nums_r = set(_NUMBER.findall(answer)), set(_NUMBER.findall(reference))
    neg_a = any(w in NEGATIONS for w in words(answer))
    neg_r = any(w in NEGATIONS for w in words(reference))
    return [
        covers_ref,
        covers_ans,
        f1,
        len(common) / max(1, len(a | r)),
        float(bool(nums_r) and not nums_r <= nums_a),
        float(neg_a != neg_r),
        abs(math.log((len(words(answer)) + 1) / (len(words(reference)) + 1))),
    ]
