"""Which BM25 tokenizer and which embedders serve each corpus language.

One row per language of the documents table (most documents first): its document count, the
label of the BM25 tokenizer :func:`ragcourt.retrieval.bm25_tokens.spec_for` picks for it under
``retrieval.bm25``, and each configured embedder as ``key (model)`` marked ``fits`` when the
model's registry ``languages`` include it (or are not stated) and ``not trained on it``
otherwise. Shown by the report and by ``ragcourt doctor``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from ragcourt.corpus.language import UNDETERMINED, language_name
from ragcourt.retrieval.bm25_tokens import spec_for
from ragcourt.retrieval.params import RetrievalView


@dataclass(frozen=True)
class LanguageServing:
    language: str
    documents: int
    bm25_tokenizer: str
    embedders: str
    embedder_fits: bool

    @property
    def label(self) -> str:
        return f"{language_name(self.language)} ({self.language})"


def language_serving(
    languages: Sequence[str | None], params: RetrievalView
) -> list[LanguageServing]:
    """One :class:`LanguageServing` per language in ``languages`` (module docstring)."""
    from ragcourt.retrieval.embedders import registry_entry

    counts = Counter(lang or UNDETERMINED for lang in languages)
    fits: dict[str, list[str]] = {}
    for key, spec in params.embedders.items():
        fits[f"{key} ({spec.model})"] = registry_entry(spec.model).languages or []
    rows = []
    for lang, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        parts, all_fit = [], True
        for name, langs in fits.items():
            ok = not langs or lang == UNDETERMINED or lang in langs
            all_fit &= ok
            parts.append(f"{name}: {'fits' if ok else 'not trained on it'}")
        rows.append(
            LanguageServing(
                lang, n, spec_for(lang, params.retrieval.bm25).label, "; ".join(parts), all_fit
            )
        )
    return rows
