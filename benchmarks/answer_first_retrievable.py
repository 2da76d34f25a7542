"""Does a generated question retrieve its own chunk? The retrieval round trip (Promptagator's
consistency filter: keep a synthetic query only if its source passage ranks in the top k),
measured as a standalone-ness check on the fresh blind labels of the answer-first pool.

Per pool question: the rank of its chunk when the question alone is the BM25 query (bm25s,
English stop words and stemmer) over its source's chunks (the demo: ``data/chunks/c256.parquet``;
SQuAD: every paragraph of the reading model's dev articles). Printed per source and k: kept,
share standalone and share good (the three labels) among kept and dropped, recall of the good
ones, and the share good among questions both this check and the LLM round trip keep. Nothing
is fitted: every k is shown.

    python -m benchmarks answer_first_retrievable \\
        $(for f in benchmarks/data/answer_first_pool_*_261?.json; do echo --pool $f; done) \\
        --labels benchmarks/data/answer_first_labels_fresh.jsonl
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks._common import ROOT
from benchmarks.answer_first import LABELS, _reader_dev_articles

KS = (1, 2, 3, 5, 10)


def _ranks(texts: list[str], rows: list[dict[str, Any]]) -> list[int | None]:
    """1-based rank of each row's chunk among ``texts`` for its question (None: not there)."""
    import bm25s
    import Stemmer

    stem = Stemmer.Stemmer("english")

    def tok(xs: list[str]) -> Any:
        return bm25s.tokenize(xs, stopwords="en", stemmer=stem, show_progress=False)

    index = bm25s.BM25()
    index.index(tok(texts), show_progress=False)
    out: list[int | None] = []
    for r in rows:
        ctx = r["context"].strip()
        own = {i for i, t in enumerate(texts) if t.strip() == ctx or ctx in t or t.strip() in ctx}
        docs, _ = index.retrieve(tok([r["question"]]), k=len(texts), show_progress=False)
        order = [int(d) for d in docs[0]]
        out.append(min(order.index(i) for i in own) + 1 if own else None)
    return out


def _share(x: np.ndarray) -> float | None:
    return round(float(x.mean()), 3) if x.size else None


def report(
    ranks: list[int | None], rows: list[dict[str, Any]], labels: dict[str, Any]
) -> dict[str, Any]:
    """Per k of :data:`KS`: the labels' shares among the questions kept and dropped."""
    standalone = np.array([labels[r["id"]]["standalone"] for r in rows])
    good = np.array([all(labels[r["id"]][k] for k in LABELS) for r in rows])
    llm = np.array([r["llm_ok"] for r in rows])
    out: dict[str, Any] = {"questions": len(rows), "llm_kept_good": _share(good[llm])}
    for k in KS:
        keep = np.array([rk is not None and rk <= k for rk in ranks])
        out[f"top{k}"] = {
            "kept": int(keep.sum()),
            "standalone_kept": _share(standalone[keep]),
            "standalone_dropped": _share(standalone[~keep]),
            "good_kept": _share(good[keep]),
            "good_dropped": _share(good[~keep]),
            "good_recall": _share(keep[good]),
            "llm_and_kept": int((keep & llm).sum()),
            "llm_and_kept_good": _share(good[keep & llm]),
        }
    return out


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pool", type=Path, action="append", required=True, help="pool JSON")
    ap.add_argument("--labels", type=Path, required=True, help="the labelled sheet (JSONL)")
    ap.add_argument("--validation-dir", type=Path, default=Path("../shared/validation"))
    args = ap.parse_args(argv)
    import polars as pl

    labels = {
        (row := json.loads(line))["id"]: row
        for line in args.labels.read_text(encoding="utf-8").splitlines()
        if line.strip()
    }
    corpora = {
        "demo": pl.read_parquet(ROOT / "data/chunks/c256.parquet")["text"].to_list(),
        "squad-reader-dev": [
            p.context for a in _reader_dev_articles(args.validation_dir) for p in a.paragraphs
        ],
    }
    by_source: dict[str, list[dict[str, Any]]] = {}
    for f in args.pool:
        pool = json.loads(f.read_text(encoding="utf-8"))
        by_source.setdefault(pool["source"], []).extend(
            r for r in pool["questions"] if r["id"] in labels
        )
    result = {
        src: {"corpus_chunks": len(corpora[src])} | report(_ranks(corpora[src], rows), rows, labels)
        for src, rows in by_source.items()
    }
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
