"""Language-aware BM25: Chinese tokenization, mixed corpora, English unchanged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

import bm25s
import numpy as np
import polars as pl
import pytest
import Stemmer

from ragcourt.core.errors import ParamsError
from ragcourt.corpus.ingest import ingest
from ragcourt.corpus.params import CorpusParams
from ragcourt.orchestration.params import load_params
from ragcourt.retrieval.bm25_tokens import LanguageTokenizers, bigram_tokens, jieba_tokens
from ragcourt.retrieval.params import BM25Params
from ragcourt.retrieval.retrieve import BM25Retriever

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "tests" / "data" / "multilingual"


def _queries(texts: list[str]) -> pl.DataFrame:
    return pl.DataFrame({"query_id": [f"q{i}" for i in range(len(texts))], "query": texts})


def test_regex_tokenizer_is_useless_on_chinese_and_jieba_is_not() -> None:
    q = "特朗普将钢铁和铝制品的关税提高到多少？ 美国股市"
    # the regex tokenizer's failure on Chinese: one token per run of characters
    assert len(bm25s.tokenize(q, return_ids=False)[0]) == 2
    assert {"钢铁", "关税", "提高"} <= set(jieba_tokens(q))
    assert "？" not in jieba_tokens(q)


def test_bigram_tokens_split_cjk_runs_and_keep_latin_words() -> None:
    assert bigram_tokens("新能源汽车 EV sales") == ["新能", "能源", "源汽", "汽车", "ev", "sales"]
    assert bigram_tokens("猫") == ["猫"]


def test_chinese_corpus_retrieves_answer_documents_with_auto_tokenizer() -> None:
    docs, _ = ingest(CorpusParams(dir=str(DATA / "zh"), extensions=[".txt"]))
    ids = [Path(p).name for p in docs["path"].to_list()]
    rows = [json.loads(x) for x in (DATA / "questions_zh.jsonl").read_text("utf-8").splitlines()]
    queries = pl.DataFrame(
        {"query_id": [r["query_id"] for r in rows], "query": [r["query"] for r in rows]}
    )
    gold = {r["query_id"]: r["doc"] for r in rows}

    def hits_at_5(tokenizer: Literal["auto", "regex", "bigram"]) -> float:
        bm = BM25Retriever(ids, docs["text"].to_list(), BM25Params(tokenizer=tokenizer),
                           languages=docs["language"].to_list())  # fmt: skip
        run = bm.search(queries, 5)
        return sum(
            gold[q] in run.filter(pl.col("query_id") == q)["chunk_id"].to_list() for q in gold
        ) / len(gold)

    assert hits_at_5("regex") == 0.0  # the old tokenizer finds nothing
    assert hits_at_5("auto") == 1.0
    assert hits_at_5("bigram") == 1.0


def test_mixed_corpus_tokenizes_each_document_and_query_in_its_language() -> None:
    zh = (DATA / "zh" / "09_railway.txt").read_text("utf-8")
    zh2 = (DATA / "zh" / "07_tea.txt").read_text("utf-8")
    de = (DATA / "de" / "01_bahn.txt").read_text("utf-8")
    de2 = (DATA / "de" / "02_wald.txt").read_text("utf-8")
    bm = BM25Retriever(["zh", "zh2", "de", "de2"], [zh, zh2, de, de2], BM25Params())
    labels = bm.tokenizer_by_language()
    assert labels["zh"] == "jieba"
    assert labels["de"] == "regex(stopwords=de, stemmer=german)"
    assert bm.query_languages(["高铁最快需要几个小时？", "Wie lange fahren die Schnellzüge?"]) == [
        "zh",
        "de",
    ]
    run = bm.search(_queries(["西安到成都的高铁", "Welche Bäume leiden unter Trockenheit?"]), 1)
    assert run.sort("query_id")["chunk_id"].to_list() == ["zh", "de2"]


def _old_bm25_run(
    ids: list[str], texts: list[str], s: BM25Params, queries: list[str], k: int
) -> tuple[list[list[str]], list[list[tuple[str, float]]]]:
    """The regex-only BM25 retriever, verbatim: one regex tokenizer for every language."""
    tok = bm25s.tokenization.Tokenizer(
        lower=True, stopwords=s.stopwords or [], stemmer=Stemmer.Stemmer(s.stemmer)
    )
    tokens = tok.tokenize(texts, return_as="string", show_progress=False)
    bm = bm25s.BM25(method=s.method, k1=s.k1, b=s.b)
    bm.index(tokens, show_progress=False)
    q_tokens = tok.tokenize(queries, return_as="string", show_progress=False, update_vocab=False)
    out: list[list[tuple[str, float]]] = []
    for toks in q_tokens:
        sc = np.asarray(bm.get_scores_from_ids(bm.get_tokens_ids([t for t in toks if t])))
        order = np.argsort(-sc, kind="stable")[:k]
        out.append([(ids[i], float(sc[i])) for i in order if sc[i] > 0])
    return tokens, out


def test_english_demo_corpus_tokens_and_rankings_are_unchanged() -> None:
    docs, _ = ingest(CorpusParams(dir=str(ROOT / "data" / "corpus"), extensions=[".txt"]))
    ids, texts = [], []
    for doc_id, text in zip(docs["doc_id"].to_list(), docs["text"].to_list(), strict=True):
        for j, para in enumerate(p for p in text.split("\n\n") if p.strip()):
            ids.append(f"{doc_id}-{j}")
            texts.append(para)
    queries = [
        "What did the president say about taxes?",
        "Which war was mentioned in the address?",
        "freedom of speech and religion",
        "How will Congress reduce the national debt?",
        "What happened to the economy during the depression?",
        "space exploration and the moon",
        "terrorism and homeland security",
        "civil rights and voting",
    ]
    settings = load_params(ROOT / "params.yaml").retrieval.bm25
    assert settings.tokenizer == "auto"
    old_tokens, old_runs = _old_bm25_run(ids, texts, settings, queries, 10)
    languages = [detect_language_of(t) for t in texts]
    new_tokens = LanguageTokenizers(settings).tokenize(texts, languages)
    assert new_tokens == old_tokens
    bm = BM25Retriever(ids, texts, settings)  # languages detected per chunk
    run = bm.search(_queries(queries), 10)
    for qi, old in enumerate(old_runs):
        new = run.filter(pl.col("query_id") == f"q{qi}").sort("rank")
        assert new["chunk_id"].to_list() == [c for c, _ in old]
        assert new["score"].to_list() == pytest.approx([s for _, s in old])


def detect_language_of(text: str) -> str:
    from ragcourt.corpus.language import detect_language

    return detect_language(text).language


def test_unknown_tokenizer_param_is_a_one_line_error_naming_the_key(tmp_path: Path) -> None:
    p = tmp_path / "params.yaml"
    p.write_text("retrieval:\n  bm25: {tokenizer: spacy}\n", "utf-8")
    with pytest.raises(ParamsError) as err:
        load_params(p)
    msg = str(err.value)
    assert "retrieval.bm25.tokenizer" in msg and "\n" not in msg


def test_every_stemmed_language_names_an_algorithm_pystemmer_ships() -> None:
    from ragcourt.corpus.language import LANGUAGE_NAMES, STEMMED, stemmer_name

    shipped = set(Stemmer.algorithms())
    assert {c: stemmer_name(c) for c in STEMMED if stemmer_name(c) not in shipped} == {}
    unstemmed = {c for c in LANGUAGE_NAMES if LANGUAGE_NAMES[c].lower() in shipped} - STEMMED
    assert unstemmed == set()
    assert stemmer_name("de") == "german" and stemmer_name("zh") is None
