"""Checks of Chinese questions that the English word rules cannot see.

English marks a question that leans on its context with words (``this passage``, ``we``);
Chinese does so with characters inside words written without spaces, so these rules are
character patterns, applied only to a question mostly written in Chinese characters
(:func:`~ragcourt.corpus.language.mostly_cjk_language`). Any other question (an English one
quoting a Chinese name included) gets None from every function here, so English behaviour
is unchanged.

* :func:`chinese_not_standalone_reason`: a question that points at the text or a table
  (``文中``, ``上述``, ``表格中``), at something named before (a demonstrative: ``这``,
  ``这些``, ``该``, ``此``, ``那个``), names a day or year relative to the document's date
  (``今天``, ``去年``, ``上年``, ``当年``), speaks in the document's voice (``我们``,
  ``我``, ``本报``) or to its reader (``你``, ``您``: the manual's "you should..." copied
  into the question), or asks what is talked about (``提到了什么``). Function words that hold
  those characters without pointing (``应该``, ``因此``, ``如此``, ``彼此``, ``此外``,
  ``那么``, ``我国``) are not matched. Read in jieba words: a third-person pronoun (``它``,
  ``他们``, ``其``) stands for someone the context named, and a question that opens with a
  word continuing a sentence (``并``, ``而``, ``尽管``, ``比``, ``除了``) is a clause's tail.
  Last, a question that names nothing particular (no
  :func:`~ragcourt.qagen.answer_spans_zh.anchors`: no person, place, organisation, Latin-letter
  name, full year or 《title》) leans on the context for what it is about: ``全市改制企业百分之
  多少以上职工自愿认股？`` (which city?), ``结合什么的发展？``.
* :func:`chinese_question_word_mismatch`: the question word does not fit the span's type: a
  number span is asked with a quantity word (``多少``, ``几``, ``多大`` ...), a date span
  with a time word (``什么时候``, ``何时``, ``哪一年``, ``几月`` ...), and a name or noun
  phrase with neither (``什么时候`` asked of a priority value, ``多少`` asked of a name); a
  question asking why or how (``为什么``, ``为何``, ``如何``, ``怎样``) fits no span type, and
  a share (``90%``) is not asked as a count (``多少家企业``).
* :func:`with_asked_unit`: a reader's bare number, for a question that asked with the span's
  unit (``多少亿美元``), read with that unit (``1190`` -> ``1190亿美元``).
* :func:`wh_draft`: the writer's draft, asked in place as Chinese asks (the span's clause
  with the span replaced by its :func:`question_word`).
"""

from __future__ import annotations

import re

from ragcourt.corpus.language import mostly_cjk_language
from ragcourt.qagen.answer_spans_zh import anchors, clause_bounds
from ragcourt.retrieval.bm25_tokens import jieba_tokens

_POINTS_AT_TEXT = re.compile(
    r"本报|本文|文中|原文|上文|下文|前文|文章中|这篇文章|本段|段落中|本节|本章|上表|下表|表格中|表中"
    r"|图中|上图|下图|上述|前述|如下|下列|下面|上面|前面|以下(?=[哪的是])|给定的"
)
_DEMONSTRATIVE = re.compile(
    r"这|那(?=[个些种里儿样位次])|(?<![应活本理])该(?![如怎何不死])"
    r"|(?<![因如彼从由为对就至特])此(?![外])"
)
# a day or year named relative to the document's own date (今天, 去年, 本月): news copied
# into the question without the date it was written on
_RELATIVE_TIME = re.compile(
    r"今天|今日|昨天|昨日|明天|前天|今年|去年|明年|前年|上年|本年|当年|次年|同年|当天|当日"
    r"|本月|上月|下月|本周|上周|近日|日前|如今|目前|当前|现在|近年|最近|届时|本届|上届|下届"
)
# a day with no month (自１日起, ２０日): the month is the document's
_DAY_ALONE = re.compile(r"(?<![0-9０-９])[0-9０-９]{1,2}[日号](?!报)")
_DOCUMENT_VOICE = re.compile(r"我们|咱们|笔者|(?<!自)我(?![国])")
_READER = re.compile(r"(?<!迷)你|您")  # not 迷你 (mini)
_ASKS_WHAT_IS_DISCUSSED = re.compile(r"(?:提到|提及|谈到|讨论|讲述|描述)了?(?:什么|哪些)")

_QUANTITY = re.compile(r"多少|(?<![哪茶])几(?![乎何])|多[大长久高深宽重远快厚]|百分之几")
# why and how: a reason or a manner is a clause, never a date, number, name or noun phrase
_REASON_OR_MANNER = re.compile(r"为什么|为何|怎么|怎样|如何|何以")
_SHARE = re.compile(r"[%％‰]|百分点|成$")  # a percentage or share
# counts things (多少个百分点 asks for a share: not a count)
_COUNT = re.compile(r"(?:多少|几)[家个名人种项件位次台辆户所座条](?!百分点)")
_TIME = re.compile(
    r"什么时候|何时|何年|哪一?年|哪一?天|哪一?日|哪个月|哪一?季度|几月|几号|几日"
    r"|什么(?:时间|日期|年份|月份)"
)


def _chinese(question: str) -> bool:
    return mostly_cjk_language(question) == "zh"


# each pattern a Chinese question must not match, with the reason it is not standalone
_NOT_STANDALONE: tuple[tuple[re.Pattern[str], str], ...] = (
    (_POINTS_AT_TEXT, "refers to '{}', so it only makes sense next to the context"),
    (_DEMONSTRATIVE, "points with '{}' at something only the context names"),
    (_RELATIVE_TIME, "dates itself by the document ('{}'), which only the context names"),
    (_DOCUMENT_VOICE, "speaks in the document's voice ('{}'), not a reader's"),
    (_READER, "addresses the document's reader ('{}')"),
    (_ASKS_WHAT_IS_DISCUSSED, "asks what is talked about ('{}'), not for a fact"),
)


# jieba words: a third-person pronoun stands for someone the context named; a question that
# opens with a word continuing a sentence (并, 而, 尽管, 比 ...) is the tail of a clause
_PRONOUNS = frozenset({"它", "他", "她", "它们", "他们", "她们", "其", "及其"})
_CONTINUES = frozenset(
    {"尽管", "虽然", "但", "但是", "而", "而且", "并", "并且", "又", "也", "还", "才", "直到",
     "除了", "比", "与", "同时", "以及", "其中", "然而", "于是"}
)  # fmt: skip


def leans_on_context(text: str) -> str | None:
    """Why Chinese ``text`` leans on a context it does not hold (it points at the text, a
    demonstrative, a time relative to the document's date, the document's or the reader's
    voice, or asks what is talked about), or None."""
    for pattern, why in _NOT_STANDALONE:
        if (m := pattern.search(text)) is not None:
            return why.format(m.group(0))
    return None


def chinese_not_standalone_reason(question: str) -> str | None:
    """Why a Chinese ``question`` is not self-contained (module docstring), or None (also for
    any question that is not Chinese)."""
    if not _chinese(question):
        return None
    if (why := leans_on_context(question)) is not None:
        return why
    if "月" not in question and (day := _DAY_ALONE.search(question)) is not None:
        return f"names a day ('{day.group(0)}') with no month: the month is the document's"
    words = jieba_tokens(question)
    if (pronoun := next((w for w in words if w in _PRONOUNS), None)) is not None:
        return f"stands '{pronoun}' for someone or something only the context names"
    if words and words[0] in _CONTINUES:
        return f"opens with '{words[0]}', the tail of a sentence the context holds"
    if not anchors(question):
        return "names no person, place, organisation, title or year: only the context says which"
    return None


def chinese_question_word_mismatch(
    question: str, answer_type: str | None, span: str = ""
) -> str | None:
    """Why a Chinese ``question``'s question word does not fit a span of ``answer_type``
    (module docstring), or None (also for a question that is not Chinese or no type)."""
    if answer_type is None or not _chinese(question):
        return None
    if (m := _REASON_OR_MANNER.search(question)) is not None:
        return f"asks '{m.group(0)}' (a reason or a manner), which no {answer_type} span answers"
    if _SHARE.search(span) and (m := _COUNT.search(question)) is not None:
        return f"a share ('{span}'), but the question counts ('{m.group(0)}')"
    quantity, time = _QUANTITY.search(question), _TIME.search(question)
    if answer_type == "number":
        if quantity is None:
            return "a number span, but the question asks for no quantity (多少, 几, 多大 ...)"
        return None
    if answer_type == "date":
        if time is None and quantity is None:
            return "a date span, but the question asks for no time (什么时候, 何时, 哪一年 ...)"
        return None
    if (m := time or quantity) is not None:
        return f"a {answer_type} span, but the question asks '{m.group(0)}'"
    return None


# Chinese asks in place (wh-in-situ): "三峡大坝于1994年动工" -> "三峡大坝于哪一年动工？". The
# draft below is the span's clause with the span replaced by the question word of its type.
_NUMERAL = re.compile(
    r"^(?:约|近|超过|逾|共|达|仅|大约|将近|不到)?[0-9０-９零〇一二三四五六七八九十两百千点.．·,，]+[多余]?"
)  # 万 and 亿 stay with the unit: ２３９６２亿元 -> 多少亿元, 二千九百一十二万吨 -> 多少万吨
_ORG_SUFFIX = re.compile(r"(公司|集团|企业|银行|工厂|医院|学校|大学)$")
_QUESTION_WORD = {"person": "谁", "place": "哪里", "organization": "哪个机构"}


def question_word(span: str, answer_type: str | None) -> str:
    """The Chinese question word that asks for ``span`` of ``answer_type``: a number keeps its
    unit (``２３９６２亿元`` -> ``多少亿元``, ``６％`` -> ``百分之多少``), a date its grain
    (``1994年`` -> ``哪一年``, ``１月４日`` -> ``哪一天``), a company its kind (``哪家集团``);
    a person ``谁``, a place ``哪里``, anything else ``什么``."""
    span = span.strip()
    if answer_type == "number":
        if re.search(r"[%％]$", span):
            return "百分之多少"
        return "多少" + _NUMERAL.sub("", span)
    if answer_type == "date":
        if re.search(r"[日号]$", span):
            return "哪一天"
        if span.endswith("年"):
            return "哪一年"
        if span.endswith("月"):
            return "哪个月"
        return "什么时候"
    if answer_type == "organization" and (m := _ORG_SUFFIX.search(span)) is not None:
        return "哪家" + m.group(1)
    return _QUESTION_WORD.get(answer_type or "", "什么")


def wh_draft(context: str, start: int, end: int, answer_type: str | None) -> str:
    """The clause of ``context`` around ``context[start:end]`` (between clause marks ``，；：。``)
    with the span replaced by its :func:`question_word`, ending in ``？``: a draft question
    that asks exactly for the span."""
    left, right = clause_bounds(context, start, end)
    word = question_word(context[start:end], answer_type)
    return (context[left:start] + word + context[end:right]).strip() + "？"


_BARE_NUMBER = re.compile(r"[0-9０-９.．,，·]+|[〇零一二三四五六七八九十两百千万亿点]+")


def with_asked_unit(reading: str, question: str, span: str) -> str:
    """``reading`` with the unit the Chinese ``question`` asked in (``多少亿美元`` for the span
    ``１１９０亿美元``, ``百分之多少`` for a percentage) when it is a bare number: the question
    holds the unit, so the number alone answers it; any other reading is unchanged."""
    if not _chinese(question) or not _BARE_NUMBER.fullmatch(reading.strip()):
        return reading
    asked = question_word(span, "number")
    if asked not in question:
        return reading
    unit = "%" if asked == "百分之多少" else asked.removeprefix("多少")
    return reading.strip() + unit
