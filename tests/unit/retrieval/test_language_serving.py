"""Which tokenizer and embedders serve each corpus language (report / doctor rows)."""

from __future__ import annotations

from pathlib import Path

from ragcourt.orchestration.params import load_params
from ragcourt.retrieval.language_serving import language_serving

ROOT = Path(__file__).resolve().parents[3]


def test_chinese_is_served_by_jieba_and_flagged_for_the_english_embedder() -> None:
    params = load_params(ROOT / "params.yaml")
    rows = language_serving(["zh", "zh", "en", None], params)
    assert [(r.language, r.documents) for r in rows] == [("zh", 2), ("en", 1), ("und", 1)]
    zh, en, und = rows
    assert zh.bm25_tokenizer == "jieba" and not zh.embedder_fits
    assert "minilm (all-minilm-l6-v2): not trained on it" in zh.embedders
    assert en.bm25_tokenizer == "regex(stopwords=en, stemmer=english)" and en.embedder_fits
    assert und.embedder_fits
