"""BM25 (per tokenizer) vs dense retrieval on the hand-written Chinese test corpus.

Corpus: tests/data/multilingual/zh (12 made-up articles, one chunk each), queries:
tests/data/multilingual/questions_zh.jsonl (10 hand-written questions with their answer file).
Prints Hits@1, Hits@5 and MRR@10 per retriever: BM25 with the regex tokenizer (the behaviour
before per-language tokenizers), with jieba, with character bigrams, and dense with every
registry embedder given on the command line (default all-minilm-l6-v2).

    python -m benchmarks multilingual_retrieval [--embedder all-minilm-l6-v2 ...]
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from benchmarks._common import ROOT
from ragcourt.corpus.ingest import ingest
from ragcourt.corpus.params import CorpusParams
from ragcourt.retrieval.indexing import build_index
from ragcourt.retrieval.params import BM25Params
from ragcourt.retrieval.retrieve import BM25Retriever, DenseRetriever, Retriever

CORPUS = ROOT / "tests" / "data" / "multilingual" / "zh"
QUESTIONS = ROOT / "tests" / "data" / "multilingual" / "questions_zh.jsonl"


def hits_and_mrr(
    retriever: Retriever, queries: pl.DataFrame, gold: dict[str, str]
) -> dict[str, float]:
    """Hits@1, Hits@5 (share of queries whose answer document is in the top k) and MRR@10."""
    run = retriever.search(queries, 10)
    h1 = h5 = rr = 0.0
    for qid, doc in gold.items():
        ranked = run.filter(pl.col("query_id") == qid).sort("rank")["chunk_id"].to_list()
        if doc in ranked:
            r = ranked.index(doc) + 1
            h1 += r <= 1
            h5 += r <= 5
            rr += 1 / r
    n = len(gold)
    return {"hits@1": h1 / n, "hits@5": h5 / n, "mrr@10": rr / n}


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--embedder", action="append", default=None)
    args = ap.parse_args(argv)
    docs, _ = ingest(CorpusParams(dir=str(CORPUS), extensions=[".txt"]))
    ids = [Path(p).name for p in docs["path"].to_list()]
    texts, langs = docs["text"].to_list(), docs["language"].to_list()
    rows = [json.loads(line) for line in QUESTIONS.read_text("utf-8").splitlines() if line]
    queries = pl.DataFrame(
        {"query_id": [r["query_id"] for r in rows], "query": [r["query"] for r in rows]}
    )
    gold = {r["query_id"]: r["doc"] for r in rows}
    print(f"corpus: {len(ids)} documents, languages {sorted(set(langs))}; {len(rows)} questions")
    for tok in ("regex", "jieba", "bigram", "auto"):
        bm = BM25Retriever(ids, texts, BM25Params(tokenizer=tok), languages=langs)
        print(f"bm25 tokenizer={tok:6s}", hits_and_mrr(bm, queries, gold))
    from ragcourt.retrieval.embedders import encode

    for model in args.embedder or ["all-minilm-l6-v2"]:
        index = build_index(encode(model, texts))
        dense = DenseRetriever(model=model, index=index, chunk_ids=ids, batch_size=32)
        print(f"dense {model}", hits_and_mrr(dense, queries, gold))
