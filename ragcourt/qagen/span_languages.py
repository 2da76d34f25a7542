"""Which answer-span extractor reads a chunk, by the script it is written in.

A chunk whose letters are mostly CJK characters is read by its script
(:func:`~ragcourt.corpus.language.mostly_cjk_language`): Chinese by
:func:`~ragcourt.qagen.answer_spans_zh.chinese_spans`, Korean (written with spaces) by the
configured extractor. Japanese, and Thai, Lao, Khmer and Burmese (mostly their own script),
are written without spaces and have no extractor yet: :class:`NoSpanExtractor` names them.
Every other chunk keeps the configured extractor
(:func:`~ragcourt.qagen.answer_spans.extract_spans`).
"""

from __future__ import annotations

import re

from ragcourt.corpus.language import language_name, mostly_cjk_language
from ragcourt.qagen.answer_spans import AnswerSpan, Extractor, extract_spans
from ragcourt.qagen.answer_spans_zh import chinese_spans

# scripts written without spaces between words that no extractor reads yet
_UNSPACED = {
    "th": re.compile("[\u0e00-\u0e7f]"),
    "lo": re.compile("[\u0e80-\u0eff]"),
    "km": re.compile("[\u1780-\u17ff]"),
    "my": re.compile("[\u1000-\u109f]"),
}


class NoSpanExtractor(Exception):
    """A chunk in a language written without spaces that no span extractor reads."""

    def __init__(self, language: str) -> None:
        self.language = language
        name = language_name(language)
        super().__init__(f"no answer-span extractor for {name} ({language})")


def span_language(text: str) -> str | None:
    """``zh``, or the code of an unspaced language without an extractor (module docstring),
    or None: the configured extractor reads it."""
    cjk = mostly_cjk_language(text)
    if cjk is not None:
        return None if cjk == "ko" else cjk
    visible = len(re.sub(r"\s", "", text))
    for code, script in _UNSPACED.items():
        if len(script.findall(text)) * 2 >= visible:
            return code
    return None


def spans_of(text: str, extractor: Extractor, max_words: int) -> list[AnswerSpan]:
    """The answer candidates of one chunk by its script (module docstring); raises
    :class:`NoSpanExtractor` for a language no extractor reads."""
    lang = span_language(text)
    if lang == "zh":
        return chinese_spans(text, max_words)
    if lang is not None:
        raise NoSpanExtractor(lang)
    return extract_spans(text, extractor, max_words)
