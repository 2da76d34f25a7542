"""Language-aware BM25 tokenization: one tokenizer per language, chosen by a rule.

``retrieval.bm25.tokenizer`` picks the rule:

* ``regex``: every text through bm25s' regex tokenizer (lower-cased ``\\w\\w+`` words) with the
  configured ``stopwords`` and ``stemmer`` - the behaviour before per-language tokenizers.
* ``jieba`` / ``bigram``: every text through that tokenizer (below).
* ``auto`` (default), per text language: English or undetermined -> ``regex`` with the configured
  ``stopwords``/``stemmer`` (so an English corpus is tokenized exactly as before); Chinese ->
  ``jieba`` (dictionary ships in the wheel; ``bigram`` when jieba is not installed); Japanese and
  Korean -> ``bigram``; any other language -> ``regex`` with bm25s' stopword list and
  PyStemmer's stemmer for that language where they exist (else none).

``jieba``: jieba's accurate-mode words, lower-cased, tokens without a letter or digit dropped.
``bigram``: each run of CJK characters -> its overlapping character bigrams (a lone character
stays a unigram); other text -> lower-cased ``\\w\\w+`` words. Queries are tokenized with the
tokenizer of their own language (see :func:`ragcourt.retrieval.retrieve.BM25Retriever`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Literal

from ragcourt.core.errors import ConfigError
from ragcourt.corpus.language import CJK_CHAR, UNDETERMINED, stemmer_name
from ragcourt.retrieval.params import BM25Params

log = logging.getLogger("ragcourt.retrieval")

Family = Literal["regex", "jieba", "bigram"]

# ISO 639-1 codes bm25s has a stopword list for (Chinese/Korean lists are not used: they are
# applied to regex tokens only, and CJK text goes through jieba / bigrams).
STOPWORD_LISTS = frozenset({"en", "de", "nl", "fr", "es", "pt", "it", "ru", "sv", "no", "tr", "da"})
_CJK_RUN = re.compile(f"{CJK_CHAR.pattern}+")
_WORD = re.compile(r"(?u)\b\w\w+\b")


@dataclass(frozen=True)
class TokenizerSpec:
    """One tokenizer: family plus, for ``regex``, its stopword list and stemmer."""

    family: Family
    stopwords: str | None = None
    stemmer: str | None = None

    @property
    def label(self) -> str:
        """For logs and the report, e.g. ``regex(stopwords=en, stemmer=english)``."""
        if self.family != "regex":
            return self.family
        return f"regex(stopwords={self.stopwords or '-'}, stemmer={self.stemmer or '-'})"


def jieba_available() -> bool:
    try:
        import jieba  # noqa: F401
    except ImportError:
        return False
    return True


def spec_for(language: str, settings: BM25Params) -> TokenizerSpec:
    """The tokenizer for a text in ``language`` under ``settings.tokenizer`` (module docstring)."""
    configured = TokenizerSpec("regex", settings.stopwords, settings.stemmer)
    rule = settings.tokenizer
    if rule == "regex":
        return configured
    if rule == "jieba":
        if not jieba_available():
            raise ConfigError("retrieval.bm25.tokenizer: 'jieba' needs jieba (pip install jieba)")
        return TokenizerSpec("jieba")
    if rule == "bigram":
        return TokenizerSpec("bigram")
    if language in ("en", UNDETERMINED):
        return configured
    if language == "zh":
        return TokenizerSpec("jieba" if jieba_available() else "bigram")
    if language in ("ja", "ko"):
        return TokenizerSpec("bigram")
    return TokenizerSpec(
        "regex",
        language if language in STOPWORD_LISTS else None,
        stemmer_name(language),
    )


def _stemmer(name: str | None) -> Any:
    if not name:
        return None
    try:
        import Stemmer
    except ImportError:
        raise ConfigError(
            "retrieval.bm25.stemmer needs PyStemmer (pip install PyStemmer) or stemmer: null"
        ) from None
    try:
        return Stemmer.Stemmer(name)
    except KeyError:
        raise ConfigError(
            f"retrieval.bm25.stemmer: unknown language '{name}' "
            f"(known: {', '.join(Stemmer.algorithms())})"
        ) from None


@cache
def _jieba() -> Any:
    import jieba

    jieba.setLogLevel(logging.WARNING)
    return jieba


def jieba_tokens(text: str) -> list[str]:
    """jieba accurate-mode words, lower-cased; tokens without a letter or digit dropped."""
    words = _jieba().lcut(text)
    return [w.lower() for w in (x.strip() for x in words) if any(ch.isalnum() for ch in w)]


def bigram_tokens(text: str) -> list[str]:
    """CJK runs -> overlapping character bigrams (a lone character: itself); other text ->
    lower-cased ``\\w\\w+`` words, in text order."""
    out: list[str] = []
    pos = 0
    for m in _CJK_RUN.finditer(text):
        out.extend(w.lower() for w in _WORD.findall(text[pos : m.start()]))
        run = m.group(0)
        out.extend([run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)])
        pos = m.end()
    out.extend(w.lower() for w in _WORD.findall(text[pos:]))
    return out


@dataclass
class LanguageTokenizers:
    """Tokenizes texts of known languages, one tokenizer object per :class:`TokenizerSpec`
    (a bm25s ``Tokenizer`` keeps its word -> stem memo between corpus and queries).

    ``open_queries``: the corpus was not tokenized here (a saved index), so a query keeps every
    stem and the index's vocabulary drops the unknown ones, which leaves the terms the corpus
    tokenizer would have kept (it keeps a query word whose stem the corpus has)."""

    settings: BM25Params
    open_queries: bool = False
    _regex: dict[TokenizerSpec, Any] = field(default_factory=dict, init=False, repr=False)

    def _regex_tokenizer(self, spec: TokenizerSpec) -> Any:
        if spec not in self._regex:
            import bm25s

            self._regex[spec] = bm25s.tokenization.Tokenizer(
                lower=True, stopwords=spec.stopwords or [], stemmer=_stemmer(spec.stemmer)
            )
        return self._regex[spec]

    def tokenize(
        self, texts: Sequence[str], languages: Sequence[str], *, queries: bool = False
    ) -> list[list[str]]:
        """Tokens of each text with its language's tokenizer, in input order. Texts sharing a
        regex tokenizer go through it in one call (corpus: vocabulary grows; queries: not)."""
        if len(texts) != len(languages):
            raise ValueError(f"tokenize: {len(texts)} texts but {len(languages)} languages")
        out: list[list[str]] = [[] for _ in texts]
        groups: dict[TokenizerSpec, list[int]] = {}
        for i, lang in enumerate(languages):
            groups.setdefault(spec_for(lang, self.settings), []).append(i)
        for spec, idx in groups.items():
            part = [texts[i] for i in idx]
            if spec.family == "regex":
                tok = self._regex_tokenizer(spec)
                if queries:  # unknown words come back as "" and are dropped
                    toks = tok.tokenize(
                        part,
                        return_as="string",
                        show_progress=False,
                        update_vocab=self.open_queries,
                    )
                    toks = [[t for t in row if t] for row in toks]
                else:  # exactly the corpus call of the regex-only tokenizer
                    toks = tok.tokenize(part, return_as="string", show_progress=False)
            elif spec.family == "jieba":
                toks = [jieba_tokens(t) for t in part]
            else:
                toks = [bigram_tokens(t) for t in part]
            for i, row in zip(idx, toks, strict=True):
                out[i] = list(row)
        return out
