"""Answer candidates of Chinese text: jieba words and part-of-speech tags, one sentence each.

Chinese is written without spaces, so the English extractors (:mod:`.answer_spans`) see a
whole clause as one "word". Here the text is read through jieba's ``posseg`` on a copy whose
full-width ASCII forms (``２０２５``, ``％``) are folded to half width one character for one
character, so every offset is an offset of the original text. Spans never cross a sentence
end (``。！？!?；;`` or a blank line: Chinese wraps a line anywhere) and hold at most
:data:`MAX_SPAN_CHARS` characters and (but for dates and numbers, one unit each)
``max_words`` jieba words. Kinds, tried in this order, a character taken once:

* ``date``: a year, month and/or day in digits or Chinese numerals (``2025年5月15日``,
  ``五月``, ``7月份``) or a quarter (``第三季度``);
* ``number``: digits with a magnitude (``万``, ``亿`` ...) and a unit or percent
  (``41.1万桶``, ``0.5个百分点``, ``5%``; a decimal point may be ``·`` as in older Chinese
  print): a unit is the next jieba word tagged ``m``/``q`` without a digit and not a hedge
  (``左右``, ``以上``), or a whole word of :data:`_UNITS`. Digits inside a Latin token
  (``UTF-8``, ``ext4``) or after one (``Release 4``, ``OAuth 2.0``), section, table and list
  numbers (``1.1.12``, ``表 1.18``, ``3.1. 启动``) and manual sections (``sudo(8)``) name
  rather than count, and are no number;
* ``person`` / ``place`` / ``organization`` / ``entity``: runs of words tagged ``nr*`` /
  ``ns*`` / ``nt*`` / ``nz``, at least two characters;
* ``noun_phrase``: runs of two or more nouns (``n``, ``vn``, ``nz``) of jieba's dictionary,
  two characters or more each, ending in a noun (``n``, ``nz``).

Tiers follow the English ones (:func:`.answer_spans.span_tier`) read word for word, since no
Chinese question set is at hand to fit them: dates, numbers with a unit and entities of two
or more words are tier 0, a bare number and a one-word entity tier 1, noun phrases tier 2; a
entity next to an enumeration mark (``、``, ``和``, ``与``, ``及``) drops one tier, as
English list members do, and a noun phrase there is no candidate (one item of a list is a
partial answer). A span whose clause names nothing else (no :func:`anchors`: ``全市改制企业
90%以上职工自愿认股``) moves :data:`UNANCHORED_SHIFT` tiers down, below every anchored span:
its question can only say "the city" or "the company", which the reader of the question does
not know (``docs/results/languages.md``, "Questions that name something").
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import replace
from functools import cache
from typing import Any

from ragcourt.corpus.answer_match import fold_width
from ragcourt.qagen.answer_spans import NOUN_PHRASE_TIER, AnswerSpan

MAX_SPAN_CHARS = 16
#: how many tiers a span whose clause has no :func:`anchors` moves down (below every tier)
UNANCHORED_SHIFT = NOUN_PHRASE_TIER + 1
_CLAUSE_END = "，,；;：:。！？!?\n"
# what names one particular thing: a person, place, organisation or other proper name, a word
# in Latin letters (Debian, LANG), a year written in full (1996年, 一九九六年) or a 《title》
_ANCHOR_FLAGS = ("nr", "ns", "nt", "nz", "eng")
_FULL_YEAR = re.compile(r"(?:[0-9０-９]{4}|[〇零一二三四五六七八九]{4})年(?!代)")
_BOOK_TITLE = re.compile(r"《[^》]{1,40}》")
_SENTENCE_END = re.compile(r"[。！？!?；;]|\n\s*\n")  # a single line break only wraps
_DIG = "[0-9０-９]"
_CN = "[〇零一二三四五六七八九十两]"
_CNA = "[〇零一二三四五六七八九十两百千万亿]"  # a Chinese numeral's characters
_CND = "[〇零一二三四五六七八九]"  # its digits (after 点, the decimal point)
_YEAR = rf"(?:{_DIG}{{2,4}}|{_CN}{{2,4}})年"
_MONTH = rf"(?:{_DIG}{{1,2}}|十[一二]?|[一二三四五六七八九])月份?"
_DAY = rf"(?:{_DIG}{{1,2}}|{_CN}{{1,3}})[日号]"
_QUARTER = r"第[一二三四1-4１-４]季度"
#: a date: a year, month and/or day, or a quarter (read on :func:`fold_width` text)
DATE = re.compile(
    rf"{_YEAR}(?:{_MONTH}(?:{_DAY})?|{_QUARTER}|[上下]半年)?|{_MONTH}(?:{_DAY})?|{_QUARTER}"
)
# a number standing alone: not part of a Latin token (UTF-8, ext4, x86_64, v2.1, 1.1.12)
_NUMBER = re.compile(
    rf"(?<![A-Za-z0-9_./-]){_DIG}+(?:[.．,，·]{_DIG}+)*(?:[多余])?[十百千万亿]*(?:[%％‰]|个百分点)?"
    rf"(?![A-Za-z0-9_-]|\.\d)"
    rf"|(?={_CNA}*[〇零一二三四五六七八九两]){_CNA}*"
    rf"(?:[十百千万亿]{_CNA}*(?:点{_CND}+[万亿]?)?|{_CND}点{_CND}+[万亿]?)"
)
_MAN_SECTION = re.compile(r"\w\(\d\w*\)")  # sudo(8), bootup(7): a manual page's section
# a number that names rather than counts: after a Latin word (Release 4, OAuth 2.0, Python 3),
# after 表/图/第/节/章/例 (表 1.18), or numbering a heading or list item (3.1. 启动, 1. 使用)
_NAMING_BEFORE = re.compile(r"(?:[A-Za-z]\s?|[表图第节章例]\s?)$")
_NAMING_AFTER = re.compile(r"\.(?:\s|$)|\s?[节章]")
_UNITS = re.compile(
    r"(?:美元|欧元|港元|日元|英镑|人民币|元|桶|吨|公斤|千克|克|公里|千米|米|平方米|亩|人次|人|名|"
    r"家|个|次|辆|架|艘|台|部|股|倍|岁|年|天|小时|分钟|秒|件|项|条|座|所|位|户|套|期|届|场|份|"
    r"篇|页|基点)"
)
# words jieba tags as numerals that only hedge a number (30%左右): no unit
_APPROXIMATE = frozenset({"左右", "上下", "以上", "以下", "多", "余", "许", "来"})
# words jieba tags as places that name no one place
_NO_PLACE = re.compile(r"(?:[两双各本我该他外全诸多]国|全国|各地|各省|外地|当地|本地|全球|世界)")
_ENTITY_FLAGS = (("nr", "person"), ("ns", "place"), ("nt", "organization"), ("nz", "entity"))
_NOUN_FLAGS = frozenset({"n", "vn", "nz"})
_HEAD_FLAGS = frozenset({"n", "nz"})  # a noun phrase ends in a noun
_LIST_MARKS = frozenset("、和与及")  # an enumeration comma, and, with, as well as
_LISTABLE = frozenset({"person", "place", "organization", "entity"})
# an organisation's name: proper words (a place, an organisation, a short form, a name) and
# nouns up to a head word that names a body (中国一拖集团有限责任公司, 国家计委, 萍乡矿务局)
_ORG_HEAD = re.compile(
    r"(?:公司|银行|集团|委员会|协会|联合会|交易所|研究院|研究所|大学|学院|总局|管理局|矿务局)$"
)
_ORG_PARTS = frozenset({"ns", "nt", "nz", "n", "j", "nr", "nrt", "l", "an"})
_PROPER = ("ns", "nt", "nz", "j", "nr")
# a noun phrase ends where the clause goes on with punctuation, 的, a conjunction, a particle
# or a locative (中, 上): not inside a run such as 资金流向证券 (jieba tags 流向 a noun)
_NP_AFTER = frozenset({"x", "w", "uj", "ul", "uz", "ug", "ud", "uv", "c", "f", "y", ""})


@cache
def _posseg() -> Any:
    import jieba
    import jieba.posseg

    jieba.setLogLevel(logging.WARNING)
    return jieba.posseg


@cache
def _dictionary() -> Any:
    import jieba

    _posseg()
    jieba.dt.check_initialized()
    return jieba.dt.FREQ


def tagged_words(text: str) -> list[tuple[int, int, str]]:
    """(start, end, flag) of jieba's tagged words of ``text`` (read on :func:`fold_width`)."""
    out: list[tuple[int, int, str]] = []
    pos = 0
    for word, flag in _posseg().cut(fold_width(text)):
        out.append((pos, pos + len(word), flag))
        pos += len(word)
    return out


def clause_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    """(left, right) of the clause of ``text`` around ``text[start:end]``: between the clause
    marks (``，；：。！？`` and a line break) before ``start`` and after ``end``."""
    left = max((text.rfind(ch, 0, start) for ch in _CLAUSE_END), default=-1) + 1
    rights = [i for ch in _CLAUSE_END if (i := text.find(ch, end)) != -1]
    return left, min(rights) if rights else len(text)


def _anchor_spans(text: str, words: list[tuple[int, int, str]]) -> list[tuple[int, int]]:
    """(start, end) of what ``text`` names that is one particular thing, in text order."""
    found = [(s, e) for s, e, f in words if f.startswith(_ANCHOR_FLAGS)]
    found += [m.span() for m in _FULL_YEAR.finditer(text)]  # full-width digits included
    found += [m.span() for m in _BOOK_TITLE.finditer(text)]
    return sorted(found)


def _anchored(marks: list[tuple[int, int]], lo: int, hi: int, skip: tuple[int, int]) -> bool:
    """Whether an anchor of ``marks`` lies inside ``[lo, hi)`` and off ``skip`` (the answer)."""
    return any(lo <= s and e <= hi and not (s < skip[1] and skip[0] < e) for s, e in marks)


def anchors(text: str, skip: tuple[int, int] = (0, 0)) -> list[str]:
    """What ``text`` names that is one particular thing (see ``_ANCHOR_FLAGS``): jieba words
    tagged ``nr``/``ns``/``nt``/``nz``/``eng``, full years and 《titles》, in text order; one
    overlapping ``text[skip[0]:skip[1]]`` (the answer) does not count."""
    marks = _anchor_spans(text, tagged_words(text))
    return [text[s:e] for s, e in marks if not (s < skip[1] and skip[0] < e)]


def sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of ``text`` (ends: ``。！？!?；;`` or a blank line), the
    end past its mark."""
    out, start = [], 0
    for m in _SENTENCE_END.finditer(text):
        out.append((start, m.end()))
        start = m.end()
    if start < len(text):
        out.append((start, len(text)))
    return out


def _entity_kind(flag: str) -> str | None:
    return next((kind for prefix, kind in _ENTITY_FLAGS if flag.startswith(prefix)), None)


def _numbers(text: str, words: list[tuple[int, int, str]]) -> Iterable[tuple[int, int, str]]:
    """(start, end, 'number' or 'bare_number') of numbers; a unit after one extends it."""
    starts = {s: (e, f) for s, e, f in words}
    ends = {e for _, e, _ in words}
    folded = fold_width(text)
    for m in _NUMBER.finditer(folded):
        if (
            m.group(0).count(".") > 1
            or _MAN_SECTION.match(folded, max(m.start() - 2, 0))
            or _NAMING_BEFORE.search(folded, max(m.start() - 2, 0), m.start())
            or _NAMING_AFTER.match(folded, m.end())
        ):
            continue  # a section, table, list, manual-section or version number
        end, unit = m.end(), bool(re.search(r"[%‰十百千万亿点]", m.group(0)))
        nxt = starts.get(end)
        if (
            nxt is not None
            and nxt[1] in ("m", "q", "mq")
            and not re.search(r"\d", text[end : nxt[0]])
            and text[end : nxt[0]] not in _APPROXIMATE
        ):
            end, unit = nxt[0], True
        elif (u := _UNITS.match(text, end)) and u.end() in ends:  # a whole word: not 部 of 部分
            end, unit = u.end(), True
        if not re.search(r"[0-9０-９]", m.group(0)) and len(m.group(0)) < 2:
            continue  # a lone 十 or 万 of running text
        yield m.start(), end, "number" if unit else "bare_number"


def _runs(words: list[tuple[int, int, str]], kind_of: Any) -> Iterable[tuple[int, int, str, int]]:
    """(start, end, kind, words) of maximal runs of words of one kind (``kind_of(flag)``)."""
    run: list[tuple[int, int, str]] = []
    for w in [*words, (0, 0, "")]:
        kind = kind_of(w[2])
        if run and kind == kind_of(run[-1][2]) and kind is not None:
            run.append(w)
            continue
        if run and kind_of(run[0][2]) is not None:
            yield run[0][0], run[-1][1], kind_of(run[0][2]), len(run)
        run = [w]


def _organizations(text: str, words: list[tuple[int, int, str]]) -> list[tuple[int, int]]:
    """(start, end) of organisation names, longest first: a word naming a body (tagged ``nt``
    or ending in :data:`_ORG_HEAD`) and the proper words and nouns before it, from the first
    proper one (not after a digit: ``20家大商业银行``)."""
    found: list[tuple[int, int]] = []
    for i, (_, e, f) in enumerate(words):
        if not (f == "nt" or (f == "n" and _ORG_HEAD.search(text[words[i][0] : e]))):
            continue
        j = i
        while j > 0 and words[j - 1][2] in _ORG_PARTS and e - words[j - 1][0] <= MAX_SPAN_CHARS:
            j -= 1
        first = next((k for k in range(j, i) if words[k][2].startswith(_PROPER)), None)
        if first is not None and not re.search(r"\d$", fold_width(text[: words[first][0]])):
            found.append((words[first][0], e))
    return sorted(found, key=lambda se: se[0] - se[1])


def _candidates(text: str) -> Iterable[tuple[int, int, str, int]]:
    """(start, end, kind, tier) of every candidate, dates and numbers first."""
    words = tagged_words(text)
    for m in DATE.finditer(fold_width(text)):
        nxt = text[m.end() : m.end() + 1]
        # 80年代: a decade, not a year; 20年来, 有125年历史, 达十年之久: a span of years
        lasting = text[m.end() : m.end() + 2] in ("历史", "之久") or nxt == "来"
        if nxt != "代" and not (lasting and m.group(0).endswith("年")):
            yield m.start(), m.end(), "date", 0
    for s, e, kind in _numbers(text, words):
        # the 90 of 90年代 names a decade, the 23 of 二十三日 a day: no count
        if text[e : e + 2] != "年代" and text[e : e + 1] not in ("日", "号"):
            yield s, e, "number", int(kind == "bare_number")
    for s, e in _organizations(text, words):
        yield s, e, "organization", 0
    for s, e, kind, n in _runs(words, _entity_kind):
        if kind == "place" and _NO_PLACE.fullmatch(text, s, e):
            continue  # 两国, 各国, 全国: which countries only the context says
        if not (kind == "person" and n == 1 and e - s > 3):  # a name has 2-3 characters
            yield s, e, kind, int(n == 1)
    # nouns of two or more characters that jieba's dictionary holds (its HMM guesses many
    # fragments such as 地将 as nouns)
    known = _dictionary()
    nouns = [(s, e, f if e - s >= 2 and text[s:e] in known else "") for s, e, f in words]
    after = {s: f for s, _, f in words}
    for s, e, _, n in _runs(nouns, lambda f: "noun" if f in _NOUN_FLAGS else None):
        head = next(f for a, b, f in reversed(nouns) if a < e)
        if n >= 2 and head in _HEAD_FLAGS and after.get(e, "") in _NP_AFTER:
            yield s, e, "noun_phrase", NOUN_PHRASE_TIER


def chinese_spans(text: str, max_words: int = 5) -> list[AnswerSpan]:
    """Typed answer candidates of Chinese ``text`` in text order (module docstring); a text
    repeated is kept once, at its first occurrence."""
    sents = sentences(text)
    words = tagged_words(text)
    marks = _anchor_spans(text, words)
    taken: list[tuple[int, int]] = []
    out: list[AnswerSpan] = []
    for s, e, kind, tier in _candidates(text):
        s, e = _strip(text, s, e)
        sent = next(((a, b) for a, b in sents if a <= s < b), (0, len(text)))
        if e <= s or e > sent[1] or e - s > MAX_SPAN_CHARS or (e - s < 2 and kind != "number"):
            continue
        if kind not in ("date", "number") and _word_count(words, s, e) > max_words:
            continue
        if any(a < e and s < b for a, b in taken):
            continue
        taken.append((s, e))
        beside_mark = text[s - 1 : s] in _LIST_MARKS or text[e : e + 1] in _LIST_MARKS
        if kind == "noun_phrase" and beside_mark:
            continue  # one item of a list (经济手段、法律手段): a partial answer
        listed = kind in _LISTABLE and beside_mark
        tier = min(tier + listed, NOUN_PHRASE_TIER)
        if not _anchored(marks, *clause_bounds(text, s, e), (s, e)):
            tier += UNANCHORED_SHIFT
        out.append(AnswerSpan(text[s:e], s, e, kind, sent[0], sent[1], tier, listed))
    seen: set[str] = set()
    unique = []
    for sp in sorted(out, key=lambda x: (x.start, x.end)):
        if sp.text not in seen:
            seen.add(sp.text)
            unique.append(replace(sp))
    return unique


def _word_count(words: list[tuple[int, int, str]], s: int, e: int) -> int:
    return sum(1 for a, b, _ in words if a < e and s < b)


def _strip(text: str, s: int, e: int) -> tuple[int, int]:
    while s < e and not text[s].isalnum():
        s += 1
    while e > s and not (text[e - 1].isalnum() or text[e - 1] in "%％‰"):
        e -= 1
    return s, e
