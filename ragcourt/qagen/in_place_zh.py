"""Chinese questions asked in place, by rule, without a writer model.

Chinese asks in place (wh-in-situ): a question is its statement with the asked-for phrase
replaced by a question word (``万德莱公司于1993年成立`` -> ``万德莱公司于哪一年成立？``). A
question for an answer span can therefore be built from the span's own sentence, as rule-based
question generation does (overgenerate, then filter: Heilman and Smith, 2010).
:func:`in_place_question` builds it from:

1. the span's clause (between ``，：`` inside its sentence);
2. when that clause names nothing but the span (no :func:`anchors`), the clauses before it back
   to the nearest one that names something: a Chinese sentence states its topic once and its
   later clauses go on about it (``外商投资企业进出口……，占外贸总值的４６．９％``);
3. further back while the first clause opens with an adverb, a verb or a conjunction
   (``仍将削减……``: its subject is named before);
4. the clauses after it while the last one only frames what follows (``从１９８６年起``,
   ``……时``, ``据……显示``), at most two;
5. when the question holds no date, the sentence's opening time phrase (a first clause of at
   most :data:`TIME_PHRASE_CHARS` characters holding a year or a month): a figure changes
   with the year, so a number is asked only with a year or a month in its question;
6. bracketed asides (``（记者洪秉明）``), a leading dateline (``新华社马尼拉１月４日电``) and a
   leading conjunction (``因为``, ``但是``, ``同时`` ...) dropped;
7. the span replaced by its :func:`~ragcourt.qagen.questions_zh.question_word`; a place or an
   organisation that qualifies a noun is asked ``哪里的`` / ``哪个机构的``.

No question is built, and the reason is returned, when no clause up to the span names
anything, a number's question names no year or month, the sentence has no end mark (a heading,
or cut by the chunk) or opens without its subject, the span is one item of a ``、`` list, one
end of a range, inside a title, an aside or a dateline, or a person named after a title or
another name or before a noun (``总统苏哈托`` would read ``总统谁``, ``邓小平同志``
``谁同志``), when the span's clause only frames a sentence that ends there, or when the
question would run past :data:`MAX_QUESTION_CHARS` characters or cut a quotation or a bracket
in two. Nor is one built where it would read ungrammatically or lean on its passage: a word
qualifies the span (``偏远山区`` -> ``偏远哪里``; a figure after its noun is Chinese,
``利润多少亿元``), the span is part of a joined name (``亚历克·诺夫``), inside a quotation, a
title before a name (``英国首相布莱尔`` -> ``什么布莱尔``) or a name before ``地区``; the question
opens with its bare question word (``谁也是……``: the rest describes the answer, seldom only
it), with a verb or a framing preposition (``于……展出``: past a time phrase such as
``截至１９９７年底``, and a frame a comma closes), ends in a frame (``……陪同下``), or holds half
of a ``不仅……而且`` pair (:func:`_body_refusal`).
:func:`askable_spans` keeps only the spans a standalone question can be built for, so no
attempt is spent on a span that would fail before any model call.

The question keeps the sentence's words, so it shares long runs with its chunk (the copy check
does not apply to it): lexical retrievers find such questions more easily than paraphrased
ones (``docs/results/languages.md``, "Questions asked in place").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ragcourt.corpus.answer_match import fold_width
from ragcourt.qagen.answer_spans import AnswerSpan
from ragcourt.qagen.answer_spans_zh import DATE, anchors, sentences, tagged_words
from ragcourt.qagen.questions_zh import chinese_not_standalone_reason, question_word

#: a second verdict on built questions: True keeps each (one per question, in order)
QuestionFilter = Callable[[Sequence[str]], list[bool]]
#: the ``question_model`` of a question built here (no model wrote it)
IN_PLACE_WRITER = "rule:in_place_zh"
#: the longest question built, in characters before its ``？``
MAX_QUESTION_CHARS = 48
#: the longest opening clause read as its sentence's time phrase (``１９９７年``, ``１至１１月``)
TIME_PHRASE_CHARS = 12
_CLAUSE_MARK = re.compile(r"[，,：:]")
_END_MARKS = "。！？!?；;"
_LEADING_CONJUNCTION = re.compile(
    r"^(?:因为|由于|所以|因此|但是|但|而且|并且|同时|此外|另外|然而|于是|不过|可是|总之)"
)
# a clause ending so frames the next one (从1986年起, ……时, 据……显示, ……说): asked alone it is
# no question
_FRAME = re.compile(
    r"(?:起|以来|时|后|前|之际|期间|之后|之前|而言|来看|看来|显示|表明|指出|说|表示|认为|强调|称"
    r"|报道|获悉|透露|宣布|情况下|条件下|背景下|形势下|前提下|过程中|基础上)$"
)
_OPENING_FRAME = re.compile(r"为了|为(?![主])|随着|通过|经过|经(?=[^济营过])|从")
_VERB_FLAGS = frozenset({"v", "vd", "vg", "vi", "vq", "vshi", "vyou"})
# one end of a range: 27日至28日, 156亿至216亿美元, 1945年到1980年
_RANGE_AFTER = re.compile(r"\s*[至到~～—－-]\s*[0-9０-９〇零一二三四五六七八九十]")
_RANGE_BEFORE = re.compile(r"[0-9０-９年月日号]\s*[至到~～—－-]\s*$")
_ENCLOSING = (("《", "》"), ("（", "）"), ("(", ")"), ("【", "】"))
#: a bracketed aside: (记者洪秉明), （附图片１张）
ASIDE = re.compile(r"（[^（）]*）|\([^()]*\)")
# a dateline (新华社马尼拉１月４日电): where and when a report was filed, no statement
_DATELINE = re.compile(r"^\W*据?(?:新华社|中新社|本报|人民日报)[^，。：]{0,16}?[电讯]")
_PREDICATE_FLAGS = frozenset({"d", "ad", "v", "vg", "vd", "c"})
_TIME_FLAGS = frozenset({"x", "w", "m", "t", "q", "mq", "f"})  # digits, 年, 月, 今年, 以来
_ENDED = re.compile(r"[。！？!?；;][”’」』）)]*\s*$")
_PAIRS = (("“", "”"), ("‘", "’"), ("「", "」"), ("『", "』"), *_ENCLOSING)  # kept balanced
_QUALIFIED_WORD = {"place": "哪里的", "organization": "哪个机构的"}
_JOINERS = frozenset("·•—－-")  # inside a joined name: 亚历克·诺夫, 盎格鲁—撒克逊
_PLACE_TAILS = frozenset({"地区", "一带", "境内", "地带", "流域", "沿线"})  # 石南地区: one name
# the first half of a 不仅……而且 pair, asked without its second half, is a fragment
_HALF_PAIR = re.compile(r"(?:不仅|不但|不只)(?!.*(?:而且|并且|还|也))")
_QUOTES = (("“", "”"), ("‘", "’"), ("「", "」"), ("『", "』"))
# jieba flags of a word that, right before the span, qualifies it: noun, adjective,
# distinguishing word, numeral, state word, direction word, measure word, and an adverb
# (jieba tags 偏远 of 偏远山区 so)
_MODIFIER_FLAGS = frozenset("nabmzfqd")
# a question opening with its question word asks for the subject of a sentence about it
# (谁也是……大师): what is left describes it, and seldom only it
_BARE_OPENINGS = ("谁", "什么", "哪家")
# a preposition opening a question frames it (据, 以, 被, 于, 在) and leaves out its subject;
# 由 names the agent, and one before a date (截至１９９７年底) is a time phrase
_AGENT_PREPOSITION = "由"


@dataclass(frozen=True)
class InPlace:
    """A question built in place, or the reason none was (exactly one of the two is set)."""

    question: str | None = None
    why_not: str | None = None


def _clauses(sentence: str) -> list[tuple[int, int]]:
    """(start, end) of the clauses of ``sentence`` (between ``，：``; the end mark dropped)."""
    out, start = [], 0
    for m in _CLAUSE_MARK.finditer(sentence):
        out.append((start, m.start()))
        start = m.end()
    end = len(sentence.rstrip())
    while end > start and sentence[end - 1] in _END_MARKS:
        end -= 1
    out.append((start, end))
    return out


def _balanced(text: str) -> bool:
    return all(text.count(a) == text.count(b) for a, b in _PAIRS)


def in_place_question(context: str, start: int, end: int, answer_type: str | None) -> InPlace:
    """The question asking for ``context[start:end]`` (of ``answer_type``) built in place from
    its sentence (module docstring), or the reason it cannot be."""
    a, b = next(((s, e) for s, e in sentences(context) if s <= start < e), (0, len(context)))
    sent, s, e = context[a:b], start - a, end - a
    clauses = _clauses(sent)
    k = next((i for i, (cs, ce) in enumerate(clauses) if cs <= s < max(ce, cs + 1)), None)
    if k is None or e > clauses[k][1]:
        return InPlace(why_not="the span crosses a clause mark")
    if not _ENDED.search(sent):
        return InPlace(why_not="its sentence has no end mark: a heading, or cut by the chunk")
    words = tagged_words(sent)
    if (why := _span_refusal(sent, words, s, e, answer_type)) is not None:
        return InPlace(why_not=why)
    first = next((j for j in range(k, -1, -1) if _names_something(sent, clauses, j, k, s, e)), None)
    if first is None:
        return InPlace(
            why_not="names no person, place, organisation, title or year: no clause of its "
            "sentence up to the span names anything"
        )
    while first > 0 and _opens_with_predicate(words, clauses[first][0]):
        first -= 1
    if _opens_with_predicate(words, clauses[first][0]):
        return InPlace(why_not="its sentence opens without a subject (the one before names it)")
    last = k
    if _frames_only(sent, words, clauses[k], (s, e)):
        if k == len(clauses) - 1:
            return InPlace(why_not="the span's clause states nothing: it only frames or names")
        last = len(clauses) - 1  # the statement is further on: the whole sentence
    word = question_word(sent[s:e], answer_type)
    after = next((f for ws, _, f in words if ws >= e), "")
    if answer_type in _QUALIFIED_WORD and after.startswith("n"):  # not 台湾发展 (vn)
        word = _QUALIFIED_WORD[answer_type]
    left = _DATELINE.sub("", ASIDE.sub("", sent[clauses[first][0] : s]))
    right = ASIDE.sub("", sent[e : clauses[last][1]])
    body = left + word + right
    opening = sent[clauses[0][0] : clauses[0][1]]
    if (
        first > 0
        and not DATE.search(fold_width(left + right))
        and len(opening) <= TIME_PHRASE_CHARS
        and DATE.search(fold_width(opening))
    ):
        body = opening + "，" + body
    body = _LEADING_CONJUNCTION.sub("", re.sub(r"\s+", "", body))
    if answer_type == "number" and not DATE.search(fold_width(body)):
        return InPlace(why_not="a figure with no year or month: when, only the context says")
    if (why := _body_refusal(body)) is not None:
        return InPlace(why_not=why)
    if not _balanced(body):
        return InPlace(why_not="its clauses cut a quotation or a bracket in two")
    if len(body) > MAX_QUESTION_CHARS:
        return InPlace(
            why_not=f"asked in place it runs to {len(body)} characters (> {MAX_QUESTION_CHARS})"
        )
    return InPlace(question=body + "？")


def _span_refusal(
    sent: str, words: list[tuple[int, int, str]], s: int, e: int, answer_type: str | None
) -> str | None:
    """Why the span ``sent[s:e]`` cannot be asked for in place, or None: a name or a noun
    phrase that cuts a jieba word (``光华`` of ``朱光华``), one item of a ``、`` list, one end
    of a range, a span inside a title, an aside or a dateline, or a person named after a title,
    a name or ``的``, or before a noun (``邓小平同志`` would read ``谁同志``)."""
    cuts = s not in {ws for ws, _, _ in words} or e not in {we for _, we, _ in words}
    if cuts and answer_type not in ("date", "number"):  # jieba joins 年前, 日电, 万多名
        return "the span cuts a word in two"
    if "、" in (sent[s - 1 : s], sent[e : e + 1]):
        return "the span is one item of a list"
    if _RANGE_AFTER.match(sent, e) or _RANGE_BEFORE.search(sent[:s]):
        return "the span is one end of a range"
    if any(sent.count(o, 0, s) > sent.count(c, 0, s) for o, c in _ENCLOSING):
        return "the span is inside a title or an aside"
    if any(m.start() <= s < m.end() for m in _DATELINE.finditer(sent)):
        return "the span is in a dateline, not in a statement"
    if sent[s - 1 : s] in _JOINERS or sent[e : e + 1] in _JOINERS:
        return "the span is one part of a joined name (亚历克·诺夫, 盎格鲁—撒克逊)"
    if any(sent.count(o, 0, s) > sent.count(c, 0, s) for o, c in _QUOTES):
        return "the span is inside a quotation"
    before = next((f for _, we, f in reversed(words) if we <= s), "")
    after = next((f for ws, _, f in words if ws >= e), "")
    if answer_type == "person" and (before.startswith("n") or sent[s - 1 : s] == "的"):
        return f"the person '{sent[s:e]}' is named after a title, a name or 的"
    if answer_type == "person" and after.startswith("n"):
        return f"the person '{sent[s:e]}' qualifies a noun (asked in place: 谁同志, 谁计划)"
    if after == "nr" or next((sent[a:b] for a, b, _ in words if a == e), "") in _PLACE_TAILS:
        return "the span is a title before a name, or a name before 地区 (什么布莱尔, 哪里的地区)"
    qualified = next((f for _, we, f in words if we == s), "")[:1] in _MODIFIER_FLAGS
    if qualified and answer_type not in ("date", "number"):  # 利润多少亿元 is Chinese
        return "a word qualifies the span: asked in place it reads 偏远哪里, 新型什么制冷剂"
    return None


def _body_refusal(body: str) -> str | None:
    """Why the question ``body`` (built, before its ``？``) is no complete question, or None:
    it opens with its bare question word (``谁也是……``), with a verb or a preposition past an
    opening date (``历任……``, ``于……展出``; not ``由``, the agent, nor a preposition of time,
    ``截至１９９７年底``), or ends in a frame (``……陪同下``)."""
    if body.startswith(_BARE_OPENINGS):
        return "it opens with its question word: the rest describes the answer, seldom only it"
    if (word := _opening_predicate(body)) is not None:
        return f"it opens with '{word}': its subject is not in it"
    if _FRAME.search(body):
        return "it ends in a frame (……下, ……时): no statement is asked about"
    if _HALF_PAIR.search(body):
        return "it holds half of a 不仅……而且 pair: a fragment"
    return None


def _opening_predicate(body: str) -> str | None:
    """The verb or preposition ``body`` opens with, past a date, or None; a preposition's
    frame that a comma closes (``据新华社报道，``) is passed over to the clause after it."""
    words = tagged_words(body)
    first = next(((s, e, f) for s, e, f in words if f not in _TIME_FLAGS), None)
    if first is None or first[2][:1] not in ("p", "v"):
        return None
    word, then = body[first[0] : first[1]], fold_width(body[first[1] :])
    if word == _AGENT_PREPOSITION:
        return None
    if DATE.match(then):  # 于, 截至 before a date: a time phrase; the clause goes on after it
        return _opening_predicate(body[first[1] :])
    if first[2] == "p" and (comma := body.find("，", first[1])) >= 0:
        return _opening_predicate(body[comma + 1 :])
    return word


def _frames_only(
    sent: str, words: list[tuple[int, int, str]], clause: tuple[int, int], span: tuple[int, int]
) -> bool:
    """Whether the span's ``clause`` of ``sent`` states nothing yet: it frames what follows
    (``从１９８６年起``, ``为增强……``, ``据……显示``) or no word of it but the span is a verb
    (``山东省德州等市的十余家造纸厂``, ``１９９８年``)."""
    tail = sent[max(clause[0], span[1]) : clause[1]]
    if _FRAME.search(tail) or _OPENING_FRAME.match(sent, clause[0]):
        return True
    return not any(
        f in _VERB_FLAGS
        and clause[0] <= ws
        and we <= clause[1]
        and not (ws < span[1] and span[0] < we)
        for ws, we, f in words
    )


def _names_something(
    sent: str, clauses: list[tuple[int, int]], j: int, k: int, s: int, e: int
) -> bool:
    """Whether clause ``j`` names something (:func:`anchors`); in the span's clause ``k`` the
    span itself does not count: a clause naming only the answer names nothing for the question."""
    cs, ce = clauses[j]
    return bool(anchors(sent[cs:ce], (s - cs, e - cs) if j == k else (0, 0)))


def _opens_with_predicate(words: list[tuple[int, int, str]], at: int) -> bool:
    """Whether the first word at or after offset ``at``, past a date (``１９９６年``), is an
    adverb, a verb or a conjunction: the clause goes on about a subject named before it
    (``仍将削减……``, ``并于……成立``, ``１９９６年占……``)."""
    flag = next((f for s, _, f in words if s >= at and f not in _TIME_FLAGS), "")
    return flag in _PREDICATE_FLAGS


def askable_split(
    text: str, spans: list[AnswerSpan], keep: QuestionFilter | None = None
) -> tuple[list[AnswerSpan], list[AnswerSpan]]:
    """(kept, held back): the ``spans`` of ``text`` whose question can be asked in place and,
    asked, is standalone by rule (:func:`chinese_not_standalone_reason`), split by ``keep``
    when given (one verdict per question, e.g.
    :meth:`~ragcourt.qagen.standalone_probe.StandaloneProbe.keeps`; None keeps all). Spans
    refused by rule are in neither: they would only be attempts that fail before any model
    call."""
    found = []
    for sp in spans:
        q = in_place_question(text, sp.start, sp.end, sp.answer_type).question
        if q is not None and chinese_not_standalone_reason(q) is None:
            found.append((sp, q))
    if keep is None or not found:
        return [sp for sp, _ in found], []
    verdicts = keep([q for _, q in found])
    kept = [sp for (sp, _), ok in zip(found, verdicts, strict=True) if ok]
    return kept, [sp for (sp, _), ok in zip(found, verdicts, strict=True) if not ok]


def askable_spans(
    text: str, spans: list[AnswerSpan], keep: QuestionFilter | None = None
) -> list[AnswerSpan]:
    """The spans :func:`askable_split` keeps."""
    return askable_split(text, spans, keep)[0]
