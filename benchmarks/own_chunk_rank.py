"""How easily BM25 finds a generated question's own chunk: per ``answer_first generate`` run,
the rank of each accepted question's chunk among all the project's chunks when the question
alone is the BM25 query (the project's ``retrieval.bm25`` settings and tokenizers: jieba for
Chinese), and the share of the question's words that its chunk holds.

A question that keeps its sentence's words (asked in place) is found more easily than one
that paraphrases: this measures by how much, run beside run on the same project::

    python -m benchmarks own_chunk_rank --project /tmp/zhnewsh \\
        --run benchmarks/data/answer_first_36_zh_peoplesdaily_h_in_place.json \\
        --run benchmarks/data/answer_first_36_zh_peoplesdaily_h_llm.json
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl


def _retriever(project: Path) -> Any:
    from ragcourt.core.io import read_table
    from ragcourt.orchestration.params import load_params
    from ragcourt.retrieval.retrieve import BM25Retriever, chunk_languages

    params = load_params(project / "params.yaml")
    chunking = params.qagen.reference_chunking
    chunks = read_table(project / f"data/chunks/{chunking}.parquet", "chunks")
    return BM25Retriever(
        chunks["chunk_id"].to_list(),
        chunks["text"].to_list(),
        params.retrieval.bm25,
        languages=chunk_languages(chunks, str(project / "data/documents.parquet")),
    )


def ranks(retriever: Any, items: list[dict[str, Any]]) -> list[int | None]:
    """1-based rank of each item's chunk (``context``) for its ``question`` (None: not found)."""
    by_text = {t: cid for cid, t in zip(retriever.chunk_ids, retriever.texts, strict=True)}
    own = [by_text.get(it["context"]) for it in items]
    queries = pl.DataFrame(
        {"query_id": [str(i) for i in range(len(items))], "query": [it["question"] for it in items]}
    )
    run = retriever.search(queries, len(retriever.chunk_ids))
    out: list[int | None] = []
    for i, cid in enumerate(own):
        hits = run.filter(pl.col("query_id") == str(i)).sort("rank")["chunk_id"].to_list()
        out.append(hits.index(cid) + 1 if cid in hits else None)
    return out


def word_share(question: str, context: str) -> float:
    """The share of the question's jieba words (punctuation left out) that its chunk holds."""
    from ragcourt.retrieval.bm25_tokens import jieba_tokens

    words = [w for w in jieba_tokens(question) if w.strip() and w not in "？?，,。"]
    return sum(w in context for w in words) / len(words) if words else 0.0


def report(retriever: Any, run: Path) -> dict[str, Any]:
    items = json.loads(run.read_text(encoding="utf-8"))["accepted_items"]
    found = ranks(retriever, items)
    n = len(items)
    reciprocal = [1 / r if r else 0.0 for r in found]
    return {
        "run": run.name,
        "questions": n,
        "chunks": len(retriever.chunk_ids),
        "success_at_1": round(sum(r == 1 for r in found) / n, 3) if n else None,
        "success_at_5": round(sum(r is not None and r <= 5 for r in found) / n, 3) if n else None,
        "mrr": round(sum(reciprocal) / n, 3) if n else None,
        "median_word_share": round(
            statistics.median(word_share(it["question"], it["context"]) for it in items), 3
        )
        if n
        else None,
    }


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m benchmarks own_chunk_rank")
    ap.add_argument("--project", type=Path, required=True, help="the project the runs read")
    ap.add_argument("--run", type=Path, action="append", required=True, help="generate JSON")
    args = ap.parse_args(argv)
    retriever = _retriever(args.project)
    print(json.dumps([report(retriever, run) for run in args.run], indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
