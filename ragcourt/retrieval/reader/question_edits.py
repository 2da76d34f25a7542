"""Edited questions that assert what their paragraph does not state (the reader's hardest
unanswerables, after SQuAD 2.0's adversarial kinds and the generator's own failure mode).

Each edit returns a new question or None when it does not apply:

- :func:`swap_entity`: a name, year or number of the question replaced by another of the same
  kind from the same article that the answer's sentence does not hold;
- :func:`negate`: ``not`` after the first auxiliary verb;
- :func:`swap_antonym`: a relation or comparison word replaced by its opposite.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

_YEAR = re.compile(r"\b(1[0-9]{3}|20[0-9]{2})\b")
_NUMBER = re.compile(r"\b\d[\d,]*(?:\.\d+)?\b")
_NAME = re.compile(
    r"\b[A-Z][a-zA-Z'\-]+(?:\s+(?:of|the|de|von|van|and|du|la|del|for)?\s*[A-Z][a-zA-Z'\-]+)*"
)
_AUX = re.compile(
    r"\b(is|was|are|were|did|does|do|has|have|had|can|could|will|would|should|may|might)\b",
    re.I,
)
_WH_START = re.compile(
    r"^(what|which|who|whom|whose|when|where|why|how|in|on|at|by|for|from|to|of|during|after|"
    r"before|the|a|an|according|along|with|as|since|under|over|between|among)\b",
    re.I,
)

ANTONYMS: dict[str, str] = {
    pair[0]: pair[1]
    for a, b in [
        ("largest", "smallest"), ("biggest", "smallest"), ("first", "last"),
        ("before", "after"), ("north", "south"), ("east", "west"), ("northern", "southern"),
        ("eastern", "western"), ("most", "least"), ("more", "less"), ("earliest", "latest"),
        ("highest", "lowest"), ("higher", "lower"), ("older", "younger"), ("oldest", "youngest"),
        ("increase", "decrease"), ("increased", "decreased"), ("maximum", "minimum"),
        ("major", "minor"), ("above", "below"), ("inside", "outside"), ("won", "lost"),
        ("win", "lose"), ("born", "died"), ("founded", "dissolved"), ("built", "demolished"),
        ("bought", "sold"), ("opened", "closed"), ("began", "ended"), ("start", "end"),
        ("started", "ended"), ("longest", "shortest"), ("longer", "shorter"),
        ("best", "worst"), ("better", "worse"), ("strongest", "weakest"), ("rich", "poor"),
        ("richest", "poorest"), ("early", "late"), ("ancient", "modern"), ("male", "female"),
        ("men", "women"), ("allowed", "banned"), ("accepted", "rejected"),
        ("supported", "opposed"), ("entered", "left"), ("joined", "left"), ("arrived", "departed"),
        ("import", "export"), ("imports", "exports"), ("positive", "negative"),
        ("success", "failure"), ("successful", "unsuccessful"), ("legal", "illegal"),
        ("public", "private"), ("increase", "reduction"), ("gained", "lost"),
        ("hottest", "coldest"), ("wettest", "driest"), ("heaviest", "lightest"),
        ("upper", "lower"), ("western", "eastern"), ("father", "mother"), ("son", "daughter"),
        ("king", "queen"), ("husband", "wife"), ("brother", "sister"),
    ]
    for pair in ((a, b), (b, a))
}  # fmt: skip


def kind_of(text: str) -> str | None:
    """``year``, ``number`` or ``name`` for a swappable phrase, else None."""
    if _YEAR.fullmatch(text):
        return "year"
    if _NUMBER.fullmatch(text):
        return "number"
    if _NAME.fullmatch(text):
        return "name"
    return None


def phrases(text: str) -> list[tuple[str, str]]:
    """The (kind, phrase) of every year, number and capitalised name in ``text``."""
    found = [("year", m.group()) for m in _YEAR.finditer(text)]
    found += [
        ("number", m.group()) for m in _NUMBER.finditer(text) if not _YEAR.fullmatch(m.group())
    ]
    found += [("name", m.group()) for m in _NAME.finditer(text)]
    return found


def _question_phrases(question: str) -> list[tuple[str, str, int]]:
    """(kind, phrase, start) in the question, a capitalised first word (``What``, ``In``) not
    counted as a name."""
    out = []
    for kind, rx in (("year", _YEAR), ("number", _NUMBER), ("name", _NAME)):
        for m in rx.finditer(question):
            text = m.group()
            if kind == "number" and _YEAR.fullmatch(text):
                continue
            if kind == "name" and m.start() == 0:
                text = _WH_START.sub("", text).strip()
                if not text or not text[0].isupper():
                    continue
                out.append((kind, text, question.index(text, m.start())))
                continue
            out.append((kind, text, m.start()))
    return out


def swap_entity(
    question: str, pool: Sequence[tuple[str, str]], forbidden: str, rng: random.Random
) -> str | None:
    """``question`` with one of its names/years/numbers replaced by a different phrase of the
    same kind from ``pool``, one that ``forbidden`` (the answer's sentence) does not contain."""
    mine = _question_phrases(question)
    rng.shuffle(mine)
    low = forbidden.lower()
    for kind, text, start in mine:
        options = sorted(
            {p for k, p in pool if k == kind and p.lower() != text.lower() and p.lower() not in low}
        )
        if kind in ("year", "number") and not options:
            options = [_shift_number(text, rng)]
        if options:
            new = rng.choice(options)
            if new.lower() in question.lower():
                continue
            return question[:start] + new + question[start + len(text) :]
    return None


def _shift_number(text: str, rng: random.Random) -> str:
    digits = text.replace(",", "")
    try:
        value = float(digits)
    except ValueError:
        return text + "0"
    shift = rng.choice([-1, 1]) * rng.randint(1, max(2, int(abs(value) * 0.3) or 2))
    new = value + shift
    return str(int(new)) if "." not in digits else f"{new:.{len(digits.split('.')[1])}f}"


def negate(question: str) -> str | None:
    """``not`` inserted after the question's first auxiliary verb; None without one or when
    it is already negated."""
    if re.search(r"\b(not|never|n't)\b", question, re.I):
        return None
    m = _AUX.search(question)
    if m is None:
        return None
    return question[: m.end()] + " not" + question[m.end() :]


def swap_antonym(question: str, rng: random.Random) -> str | None:
    """One word of :data:`ANTONYMS` in ``question`` replaced by its opposite (case kept)."""
    hits = [m for m in re.finditer(r"[A-Za-z]+", question) if m.group().lower() in ANTONYMS]
    if not hits:
        return None
    m = rng.choice(hits)
    new = ANTONYMS[m.group().lower()]
    if m.group()[0].isupper():
        new = new.capitalize()
    return question[: m.start()] + new + question[m.end() :]
