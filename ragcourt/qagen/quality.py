"""The QA quality gate: rule filters that run before the LLM judges.

Texts are compared as *units*: each CJK character is one unit, any other run of letters or
digits is one lower-cased word, so every rule works the same on Chinese and on English.
Each rule returns ``None`` (pass) or a one-line reason; :data:`GATE` is their fixed order, and
each is registered in :data:`~ragcourt.qagen.filter_registry.QA_FILTERS` under its name
(score 1 = pass, 0 = rejected with the reason; no model call).

* ``question_quality``: a meta-question about the source ("the article/text/passage/section/
  document/author", "这篇文章", "本文", ...), a question about a question ("the answer to the
  question"), one with fewer than :data:`MIN_QUESTION_UNITS` units (not specific), or a
  statement: no question mark (:data:`QUESTION_MARKS`; the 1.5B writer sometimes copies a
  sentence of the chunk instead of asking).
* ``question_language``: the question is not in its context's language - a CJK context with a
  question without CJK characters or the reverse, or (same script) the detector gives the
  context's language < 0.2 while another language gets >= 0.8 (see
  :func:`ragcourt.corpus.language.probabilities`).
* ``degenerate``: question or answer in a repetition loop (a unit n-gram, n = 3, occurring
  >= 3 times, or a distinct-unit ratio < 0.35 over >= 16 units), a question of more than
  :data:`MAX_QUESTION_UNITS` units, or a question echoing the writer prompt (>= 5 consecutive
  units of the question's prompt template).
* ``answer_support``: the share of the reference answer's units that occur in its span
  (context) is < :data:`MIN_ANSWER_SUPPORT`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ragcourt.core.prompts import prompt
from ragcourt.corpus.language import CJK_CHAR, UNIT, has_cjk, probabilities
from ragcourt.qagen.filter_registry import (
    QA_FILTERS,
    JudgeOutcome,
    JudgeSettings,
    QAFilter,
    QAItem,
)

if TYPE_CHECKING:
    from ragcourt.llm import Gateway

MIN_QUESTION_UNITS = 4
MAX_QUESTION_UNITS = 60
MIN_ANSWER_SUPPORT = 0.5
REPEAT_N, REPEAT_TIMES = 3, 3
MIN_DISTINCT_RATIO, DISTINCT_MIN_UNITS = 0.35, 16
ECHO_RUN = 5

GATE: tuple[str, ...] = ("question_quality", "question_language", "degenerate", "answer_support")

_META = re.compile(
    r"\b(?:the|this|that|above|given|following|provided|original|whole|entire)\s+"
    r"(?:article|text|passage|section|document|paragraph|excerpt|context|story|chapter|author|"
    r"writer|speech|report)s?\b"
    r"|\banswer\s+to\s+(?:the|this)\s+question\b|\bthe\s+question\s*:"
    r"|这篇|本文|文中|上文|原文|该文|这段|本段|文章中|材料中",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class GateRejection:
    """The first gate rule an item fails: its name and a one-line reason."""

    filter: str
    reason: str


def units(text: str) -> list[str]:
    """CJK characters and lower-cased words of ``text``, in order."""
    return [u.lower() for u in UNIT.findall(text)]


QUESTION_MARKS = ("?", "\uff1f", "\u061f", "\u055e")  # ASCII, full-width, Arabic, Armenian


def question_quality_reason(question: str) -> str | None:
    if not any(mark in question for mark in QUESTION_MARKS):
        return "not a question: no question mark (a statement, often a sentence of the chunk)"
    m = _META.search(question)
    if m is not None:
        return f"meta-question: asks about '{m.group(0)}' instead of a fact"
    n = len(units(question))
    if n < MIN_QUESTION_UNITS:
        return f"not specific: {n} words/characters < {MIN_QUESTION_UNITS}"
    return None


def language_mismatch_reason(question: str, context: str) -> str | None:
    q_cjk, c_cjk = has_cjk(question), _mostly_cjk(context)
    if c_cjk and not q_cjk:
        return "language: the context is CJK text, the question has no CJK characters"
    if q_cjk and not c_cjk and _mostly_cjk(question):
        return "language: the question is CJK text, the context is not"
    if c_cjk:
        return None
    ctx = probabilities(context)
    if not ctx:
        return None
    ctx_lang = max(ctx.items(), key=lambda kv: kv[1])[0]
    q = probabilities(question)
    if not q:
        return None
    top, p = max(q.items(), key=lambda kv: kv[1])
    if top != ctx_lang and p >= 0.8 and q.get(ctx_lang, 0.0) < 0.2:
        return f"language: question detected as '{top}' ({p:.2f}), context as '{ctx_lang}'"
    return None


def _mostly_cjk(text: str) -> bool:
    u = units(text)
    return bool(u) and sum(1 for x in u if CJK_CHAR.fullmatch(x)) >= len(u) / 2


def repetition_reason(text: str, what: str) -> str | None:
    u = units(text)
    grams = Counter(tuple(u[i : i + REPEAT_N]) for i in range(len(u) - REPEAT_N + 1))
    if grams:
        gram, times = grams.most_common(1)[0]
        if times >= REPEAT_TIMES:
            shown = " ".join(gram)[:40]
            return f"repetition loop in the {what}: '{shown}' x{times}"
    if len(u) >= DISTINCT_MIN_UNITS and len(set(u)) / len(u) < MIN_DISTINCT_RATIO:
        return f"repetition loop in the {what}: {len(set(u))} distinct of {len(u)} words"
    return None


def echo_reason(question: str, prompt_texts: Sequence[str]) -> str | None:
    """The question repeats >= ECHO_RUN consecutive units of a prompt template."""
    q = units(question)
    if len(q) < ECHO_RUN:
        return None
    q_runs = {tuple(q[i : i + ECHO_RUN]) for i in range(len(q) - ECHO_RUN + 1)}
    for text in prompt_texts:
        p = units(re.sub(r"\{[a-z_]+\}", " ", text))
        for i in range(len(p) - ECHO_RUN + 1):
            run = tuple(p[i : i + ECHO_RUN])
            if run in q_runs:
                return f"echoes the prompt: '{' '.join(run)}'"
    return None


def degenerate_reason(question: str, answer: str, prompt_texts: Sequence[str] = ()) -> str | None:
    n = len(units(question))
    if n > MAX_QUESTION_UNITS:
        return f"over-long question: {n} words/characters > {MAX_QUESTION_UNITS}"
    return (
        repetition_reason(question, "question")
        or repetition_reason(answer, "answer")
        or echo_reason(question, prompt_texts)
    )


def answer_support_reason(answer: str, context: str) -> str | None:
    a = units(answer)
    if not a:
        return "answer has no words"
    ctx = set(units(context))
    share = sum(1 for x in a if x in ctx) / len(a)
    if share < MIN_ANSWER_SUPPORT:
        return f"answer overlap with its span {share:.2f} < {MIN_ANSWER_SUPPORT}"
    return None


def rule_reason(
    rule: str, question: str, answer: str, context: str, prompt_texts: Sequence[str] = ()
) -> str | None:
    """The reason ``rule`` (one of :data:`GATE`) rejects the item, or None."""
    if rule == "question_quality":
        return question_quality_reason(question)
    if rule == "question_language":
        return language_mismatch_reason(question, context)
    if rule == "degenerate":
        return degenerate_reason(question, answer, prompt_texts)
    if rule == "answer_support":
        return answer_support_reason(answer, context)
    raise ValueError(f"unknown gate rule '{rule}' (one of {', '.join(GATE)})")


def gate_rejection(
    question: str, answer: str, context: str, prompt_texts: Sequence[str] = ()
) -> GateRejection | None:
    """The first rule of :data:`GATE` the item fails, or None when it passes them all."""
    for rule in GATE:
        why = rule_reason(rule, question, answer, context, prompt_texts)
        if why is not None:
            return GateRejection(rule, why)
    return None


# --- the rules as registered QA filters ----------------------------------------------------


def writer_prompt_texts(cfg: JudgeSettings) -> list[str]:
    """The question writer's templates of ``cfg.writer_prompt_version`` (what an echo is
    checked against)."""
    return [
        prompt("qagen", name, cfg.writer_prompt_version, cfg.prompts_dir)
        for name in ("question_system", "question_user")
    ]


def _rule_filter(rule: str) -> QAFilter:
    def run(
        gw: Gateway, items: Sequence[QAItem], cfg: JudgeSettings, desc: str | None = None
    ) -> list[JudgeOutcome]:
        texts = writer_prompt_texts(cfg) if rule == "degenerate" else []
        out = []
        for it in items:
            why = rule_reason(rule, it.question, it.answer, it.context, texts)
            out.append(JudgeOutcome(rule, 0.0 if why else 1.0, why or "passes", model="rule"))
        return out

    run.__doc__ = f"Gate rule '{rule}' (module docstring): score 1 passes, 0 with the reason."
    return run


for _rule in GATE:
    QA_FILTERS.register(_rule)(_rule_filter(_rule))
