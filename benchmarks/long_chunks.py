"""Benchmark long chunks: truncation vs overlapping windows (best window, or mean-pooled).

For each corpus x chunking (params.yaml's c256, c512: cl100k tokens) x embedder x strategy it
embeds the chunks with :func:`ragcourt.retrieval.long_chunks.embed_chunks`, builds the real
index (:func:`ragcourt.retrieval.indexing.build_index`) and searches it with the real
:class:`~ragcourt.retrieval.retrieve.DenseRetriever`, then scores the run by span relevance
(:func:`~ragcourt.retrieval.span_relevance.qrels_from_spans`, params' rule) with ir-measures.

Corpora:

* ``squad``: SQuAD v1.1 **train** articles in file order, one document per article (its first
  ``--paragraphs`` paragraphs joined by blank lines, to bound CPU time), the first
  ``--questions`` questions of each paragraph (so answers lie all along the document, not
  only in its opening) with their answer span as ground truth.
* ``demo``: the demo corpus (data/documents.parquet) and its hand-written QA
  (data/demo_qa/handwritten.jsonl).

Strategies: ``truncate`` (the model reads the first window), ``windows`` (every window
indexed, a chunk scored by its best), ``pool`` (mean of the window vectors: computed from the
``windows`` vectors, so its embed time is theirs). Embed time is wall-clock on the machine as
it is (shared cores), index size is the serialized FAISS index. Rows are appended to
``--out`` (JSON lines) as they finish; ``--table`` prints the Markdown table of a results file.

    nice -n 10 python -m benchmarks long_chunks --corpora squad demo \\
        --embedders all-minilm-l6-v2 all-mpnet-base-v2 --out /tmp/long_chunks.jsonl
    python -m benchmarks long_chunks --pieces --embedders all-minilm-l6-v2 > /tmp/pieces.jsonl
    python -m benchmarks long_chunks --table /tmp/long_chunks.jsonl /tmp/pieces.jsonl
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from benchmarks._common import ROOT

KS = [1, 5, 10]


def squad_corpus(n_articles: int, n_paragraphs: int, n_questions: int) -> tuple[Any, Any]:
    """(documents, qa) frames for the first ``n_articles`` SQuAD v1.1 train articles,
    ``n_questions`` per paragraph."""
    from ragcourt.retrieval.trained_judges.squad_data import load_squad, squad_train_path

    docs: list[dict[str, Any]] = []
    qa: list[dict[str, Any]] = []
    for a, art in enumerate(load_squad(squad_train_path())[:n_articles]):
        doc_id = f"squad{a:03d}"
        text, offsets = "", []
        for para in art.paragraphs[:n_paragraphs]:
            text += "\n\n" if text else ""
            offsets.append(len(text))
            text += para
        kept = [
            (offsets[p], q)
            for p, qs in enumerate(art.questions[:n_paragraphs])
            for q in [
                q
                for q in qs
                if text[offsets[p] + q.start : offsets[p] + q.start + len(q.answer)] == q.answer
            ][:n_questions]
        ]
        docs.append({"doc_id": doc_id, "path": art.title, "text": text, "duplicate_of": None})
        for j, (off, q) in enumerate(kept):
            qa.append(
                {
                    "question_id": f"{doc_id}q{j}",
                    "question": q.question,
                    "doc_id": doc_id,
                    "char_start": off + q.start,
                    "char_end": off + q.start + len(q.answer),
                }
            )
    return pl.DataFrame(docs, schema_overrides={"duplicate_of": pl.String}), pl.DataFrame(qa)


def demo_corpus() -> tuple[Any, Any]:
    from ragcourt.core.io import read_table

    docs = read_table(ROOT / "data" / "documents.parquet", "documents")
    qa = pl.read_ndjson(ROOT / "data" / "demo_qa" / "handwritten.jsonl")
    return docs, qa.select("question_id", "question", "doc_id", "char_start", "char_end")


def evaluate(cv: Any, chunks: Any, qa: Any, model: str, params: Any) -> dict[str, float]:
    from ragcourt.retrieval.indexing import build_index
    from ragcourt.retrieval.ir_metrics import evaluate as ir_evaluate
    from ragcourt.retrieval.ir_metrics import mean_by_measure
    from ragcourt.retrieval.retrieve import DenseRetriever
    from ragcourt.retrieval.span_relevance import qrels_from_spans

    index = build_index(cv.vectors, cv.owners)
    most = max(_counts(cv.owners), default=1)
    retriever = DenseRetriever(model, index, chunks["chunk_id"].to_list(), max_vectors=most)
    queries = qa.select(pl.col("question_id").alias("query_id"), pl.col("question").alias("query"))
    run = retriever.search(queries, max(KS))
    qrels = qrels_from_spans(qa, chunks, params.retrieval.relevance)
    per = ir_evaluate(run, qrels, KS, ["R", "RR", "nDCG"])
    means = mean_by_measure(per)
    means["n_queries"] = float(per["query_id"].n_unique())
    return means


def _counts(owners: Any) -> list[int]:
    from collections import Counter

    return list(Counter(owners.tolist()).values())


def index_bytes(cv: Any) -> int:
    import faiss

    from ragcourt.retrieval.indexing import build_index

    return int(faiss.serialize_index(build_index(cv.vectors, cv.owners)).size)


def corpus_chunks(args: argparse.Namespace, params: Any) -> Iterator[tuple[str, str, Any, Any]]:
    """(corpus, chunking, chunks, qa) for each ``--corpora`` x ``--chunkings``, chunked as the
    pipeline does."""
    from ragcourt.corpus.chunking import chunk_table

    for corpus in args.corpora:
        docs, qa = (
            squad_corpus(args.articles, args.paragraphs, args.questions)
            if corpus == "squad"
            else demo_corpus()
        )
        for chunking in args.chunkings:
            chunks, _ = chunk_table(
                docs, chunking, params.chunkings[chunking], params.chunk_tokenizer
            )
            yield corpus, chunking, chunks, qa


def run(args: argparse.Namespace) -> None:
    from ragcourt.orchestration.params import load_params
    from ragcourt.retrieval.long_chunks import embed_chunks, pool_windows

    params = load_params(ROOT / "params.yaml")
    out = Path(args.out)
    for corpus, chunking, chunks, qa in corpus_chunks(args, params):
        texts = chunks["text"].to_list()
        for model in args.embedders:
            for strategy in args.strategies:
                if strategy == "pool":
                    continue  # derived from the windows run below
                t0 = time.perf_counter()
                cv = embed_chunks(model, texts, strategy, args.overlap, args.batch_size)
                secs = time.perf_counter() - t0
                runs = [(strategy, cv)]
                if strategy == "windows" and "pool" in args.strategies:
                    runs.append(("pool", pool_windows(cv)))
                for name, vecs in runs:
                    row = {
                        "corpus": corpus,
                        "chunking": chunking,
                        "embedder": model,
                        "strategy": name,
                        "window": vecs.window,
                        "n_chunks": len(texts),
                        "n_over_window": vecs.n_over_window,
                        "n_vectors": len(vecs.owners),
                        "embed_s": round(secs, 2),
                        "index_bytes": index_bytes(vecs),
                        **evaluate(vecs, chunks, qa, model, params),
                    }
                    with out.open("a", encoding="utf-8") as f:
                        f.write(json.dumps(row) + "\n")
                    print(json.dumps(row), flush=True)


def pieces(args: argparse.Namespace) -> None:
    """Word pieces each strategy feeds the model (tokenization only: a load-independent cost),
    one JSON line per corpus x chunking x embedder x strategy."""
    from ragcourt.orchestration.params import load_params
    from ragcourt.retrieval.embedders import load_encoder

    params = load_params(ROOT / "params.yaml")
    for corpus, chunking, chunks, _ in corpus_chunks(args, params):
        texts = chunks["text"].to_list()
        for model in args.embedders:
            enc = load_encoder(model)
            counts = enc.token_counts(texts, "document")
            truncated = sum(min(n, enc.window) for n in counts)
            windows = [
                w
                for t, n in zip(texts, counts, strict=True)
                for w in (enc.windows(t, args.overlap, "document") if n > enc.window else [t])
            ]
            whole = sum(enc.token_counts(windows, "document"))
            for strategy, n in (("truncate", truncated), ("windows", whole), ("pool", whole)):
                row = {"corpus": corpus, "chunking": chunking, "embedder": model}
                print(json.dumps({**row, "strategy": strategy, "pieces": n}), flush=True)


def table(paths: list[Path]) -> str:
    """The Markdown table of results files (one row per corpus/chunking/embedder/strategy;
    ``--pieces`` lines are merged into the rows of the same key)."""
    rows: dict[tuple[str, ...], dict[str, Any]] = {}
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            r = json.loads(line) if line.strip() else None
            if r:
                key = (r["corpus"], r["chunking"], r["embedder"], r["strategy"])
                rows.setdefault(key, {}).update(r)
    head = (
        "| corpus | chunking | embedder | strategy | chunks over window | vectors | R@5 | R@10 "
        "| MRR@10 | nDCG@10 | word pieces fed | embed s | index KiB |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    )
    lines = [head]
    order = {"truncate": 0, "windows": 1, "pool": 2}
    for name in sorted(rows, key=lambda k: (k[0] != "squad", k[1], k[2], order.get(k[3], 9))):
        r = rows[name]
        if "R@5" not in r:
            continue
        n_pieces = f"{r['pieces']:,}" if "pieces" in r else "–"
        strategy = r["strategy"] if r["n_over_window"] else "whole (none over)"
        lines.append(
            f"| {r['corpus']} | {r['chunking']} | {r['embedder']} | {strategy} "
            f"| {r['n_over_window']}/{r['n_chunks']} (window {r['window']}) | {r['n_vectors']} "
            f"| {r['R@5']:.3f} | {r['R@10']:.3f} | {r['RR@10']:.3f} | {r['nDCG@10']:.3f} "
            f"| {n_pieces} | {r['embed_s']:.1f} | {r['index_bytes'] / 1024:.0f} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    from ragcourt.core import offline

    offline.apply()  # cl100k from litellm's bundled copy, models offline
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--corpora", nargs="+", default=["squad", "demo"], choices=["squad", "demo"])
    ap.add_argument("--chunkings", nargs="+", default=["c256", "c512"])
    ap.add_argument("--embedders", nargs="+", default=["all-minilm-l6-v2"])
    ap.add_argument("--strategies", nargs="+", default=["truncate", "windows", "pool"])
    ap.add_argument("--articles", type=int, default=30)
    ap.add_argument("--paragraphs", type=int, default=8)
    ap.add_argument("--questions", type=int, default=1, help="per paragraph")
    ap.add_argument("--overlap", type=int, default=32)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--out", default="/tmp/long_chunks.jsonl")
    ap.add_argument("--table", nargs="+", help="print the Markdown table of these files and exit")
    ap.add_argument(
        "--pieces", action="store_true", help="print the word pieces fed per strategy and exit"
    )
    args = ap.parse_args(argv)
    if args.pieces:
        pieces(args)
        return
    if args.table:
        print(table([Path(t) for t in args.table]))
        return
    run(args)
