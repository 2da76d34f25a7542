"""Text checks of answer-first generation: token F1 of the round trip, the reader's reply as a
phrase, and how much of its chunk a question copies.

Normalisation and token F1 are the judges' own (:mod:`ragcourt.corpus.answer_match`). Chinese
(Han text without kana or Hangul) is compared after :func:`canonical_numbers` in characters
(each Han character a token, a Latin word or a digit run one token, as CMRC scores Chinese
SQuAD-style answers), and only when one text holds the other as a contiguous run: a character
F1 alone would let two names sharing characters pass (``北京市`` / ``南京市`` 0.67, ``中国银行``
/ ``中国人民银行`` 0.8). A pair is kept at :data:`ZH_ROUNDTRIP_F1`, a threshold fitted on
labelled Chinese (span, reading) pairs (:func:`roundtrip_threshold`). A reading that holds the
span and a qualifier (``馆驿中`` for ``馆驿中歇``, ``笔记本电脑上的移动桌面用户`` for
``移动桌面用户``) passes; a clause around the span (``系统内核和根文件系统`` for ``和根``)
fails.
"""

from __future__ import annotations

import re

from ragcourt.corpus.answer_match import contains_reference, fold_width, normalize_answer, token_f1
from ragcourt.corpus.language import cjk_script_language
from ragcourt.retrieval.bm25_tokens import jieba_tokens

__all__ = [
    "canonical_numbers",
    "clean_phrase",
    "contains_answer",
    "longest_shared_run",
    "normalize_answer",
    "numbers_agree",
    "roundtrip_threshold",
    "span_f1",
    "token_f1",
]

_WORD = re.compile(r"\w+")
# The Chinese round trip's threshold on character F1: the middle of the thresholds of best
# Cohen's kappa (0.97) against 119 hand-labelled (span, reading) pairs, 97 of them Chinese, of
# earlier Chinese runs on a technical manual, a classical novel and economic news
# (benchmarks/data/answer_first_zh_roundtrip_pairs*.jsonl; python -m benchmarks
# answer_first_zh_fit; docs/results/languages.md, "Answer-first questions on Chinese documents").
ZH_ROUNDTRIP_F1 = 0.46
_CN_DIGITS = {c: i for i, c in enumerate("〇一二三四五六七八九")} | {"零": 0, "两": 2}
_CN_NUMERAL = re.compile(r"[〇零一二三四五六七八九十两百千]+(?=[年月日号])")
# a Chinese numeral standing alone (五千, 三万, 五十八, 一千二百): two characters or more, one
# of them a digit, not glued to Arabic digits (42万亿 keeps its 万亿)
_CN_AMOUNT = re.compile(
    r"(?<![0-9.])(?=[〇零一二三四五六七八九两十百千万亿]{2})"
    r"(?=[十百千万亿]*[〇零一二三四五六七八九两])[〇零一二三四五六七八九两十百千万亿]+"
)
_MIDDLE_DOT_DECIMAL = re.compile(r"(?<=\d)·(?=\d)")  # 15121·98: a decimal point in older print
_ISO_DATE = re.compile(r"(?<!\d)(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?!\d)")
_DATE_PART = re.compile(r"(?<!\d)0+(\d)(?=[月日])|(?<=\d)号")
_PHRASE_END = "\"'`“”*.!;, 。，！；、「」『』"
_LABEL = re.compile(
    r"^\s*(?:\*\*)?(?:(?:answer|a|phrase)\s*[:.)-]|(?:答案|答|回答)\s*[:：])\s*(?:\*\*)?\s*", re.I
)


def contains_answer(question: str, answer: str) -> bool:
    """True when the normalised answer is a contiguous token run of the normalised question."""
    return contains_reference(question, answer)


def clean_phrase(text: str) -> str | None:
    """The reader's phrase: the first non-empty line without an 'Answer:' label, quotes or
    final punctuation; None if nothing remains."""
    for line in text.strip().splitlines():
        line = _LABEL.sub("", line).strip().strip(_PHRASE_END)
        if line:
            return line
    return None


def _chinese(*texts: str) -> bool:
    return cjk_script_language("".join(texts)) == "zh"


def _words(text: str, chinese: bool) -> list[str]:
    """jieba words of Chinese text, else lower-cased ``\\w+`` runs."""
    if chinese:
        return jieba_tokens(fold_width(text))
    return [w.lower() for w in _WORD.findall(text)]


def longest_shared_run(question: str, context: str) -> int:
    """The longest run of consecutive words of ``question`` that also occurs, consecutively, in
    ``context``: lower-cased ``\\w+`` runs, or jieba words when the question is Chinese."""
    chinese = _chinese(question)
    q, c = _words(question, chinese), _words(context, chinese)
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

    if _chinese(phrase, span):
        phrase, span = canonical_numbers(phrase), canonical_numbers(span)
    else:  # identity but for full-width forms (９０％ read as 90%)
        phrase, span = fold_width(phrase), fold_width(span)
    return numbers(phrase) == numbers(span)


# a Chinese numeral with a decimal point: 四点三九, 二千五百七十五点八三 (the 万/亿 after it kept)
_CN_DECIMAL = re.compile("([〇零一二三四五六七八九十两百千]+)点([〇零一二三四五六七八九]+)")


def _cn_int(numeral: str) -> int:
    """A Chinese numeral as an int: digit by digit (``二〇二四``) without 十/百/千/万/亿, else
    positional (``十二`` 12, ``二十三`` 23, ``一百零五`` 105, ``三万`` 30000, ``五千`` 5000):
    the value below 万 in each section, times 万 or 亿 at its end."""
    if not any(c in "十百千万亿" for c in numeral):
        return int("".join(str(_CN_DIGITS[c]) for c in numeral))
    total, section, digit = 0, 0, 0
    for c in numeral:
        if c in _CN_DIGITS:
            digit = _CN_DIGITS[c]
        elif c == "亿" and total and not section + digit:  # 万亿: a trillion
            total *= 100_000_000
        elif c in "万亿":
            total += (section + digit or 1) * (10_000 if c == "万" else 100_000_000)
            section, digit = 0, 0
        else:
            section += (digit or 1) * {"十": 10, "百": 100, "千": 1000}[c]
            digit = 0
    return total + section + digit


def canonical_numbers(text: str) -> str:
    """Chinese dates and numbers in one form: full-width forms folded to half width, Chinese
    numerals before 年/月/日/号 and amounts of two characters or more (``五千``, ``三万``) as
    digits, ``点`` between Chinese numerals as a decimal point (``四点三九亿`` -> ``4.39亿``),
    ``·`` between digits as a decimal point, ``2025-05-15`` (or ``/``, ``.``) as
    ``2025年5月15日``, a month's or day's leading zero dropped and 号 read as 日."""
    text = _CN_DECIMAL.sub(
        lambda m: f"{_cn_int(m[1])}." + "".join(str(_CN_DIGITS[c]) for c in m[2]), fold_width(text)
    )
    text = _CN_NUMERAL.sub(lambda m: str(_cn_int(m.group(0))), text)
    text = _MIDDLE_DOT_DECIMAL.sub(".", text)
    text = _CN_AMOUNT.sub(lambda m: str(_cn_int(m.group(0))), text)
    text = _ISO_DATE.sub(lambda m: f"{m[1]}年{int(m[2])}月{int(m[3])}日", text)
    return _DATE_PART.sub(lambda m: m.group(1) or "日", text)


def span_f1(prediction: str, span: str) -> float:
    """The round trip's F1 of a reading against its span: SQuAD token F1
    (:func:`~ragcourt.corpus.answer_match.token_f1`); for Chinese, after
    :func:`canonical_numbers` of both, the F1 over characters when one text is a contiguous
    run of the other, else 0 (``中国银行`` read as ``中国人民银行``: no match), module docstring."""
    if not _chinese(prediction, span):  # token_f1 folds full-width forms itself (９０％)
        return token_f1(prediction, span)
    pred, ref = canonical_numbers(prediction), canonical_numbers(span)
    if not (contains_reference(pred, ref) or contains_reference(ref, pred)):
        return 0.0
    return token_f1(pred, ref)


def roundtrip_threshold(prediction: str, span: str, configured: float) -> float:
    """The F1 a reading needs: :data:`ZH_ROUNDTRIP_F1` when the pair is Chinese (the scale of
    :func:`span_f1` differs there), else ``configured`` (``qagen.answer_first.roundtrip_f1``)."""
    return ZH_ROUNDTRIP_F1 if _chinese(prediction, span) else configured


def reads_back(span: str, reference: str, configured_f1: float) -> tuple[bool, float]:
    """(match, F1): a reader's ``span`` reads ``reference`` back when its :func:`span_f1`
    reaches :func:`roundtrip_threshold` and :func:`numbers_agree`."""
    f1 = span_f1(span, reference)
    need = roundtrip_threshold(span, reference, configured_f1)
    return f1 >= need and numbers_agree(span, reference), f1
