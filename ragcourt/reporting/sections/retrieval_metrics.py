"""Report section: retrieval metrics per chunking, embedder and retriever at one cutoff, and
their trend over chunk size, from ``retrieval_summary`` (spec §1's relevance rule); and, per
chunk size x embedder cell, how chunks longer than the embedder's window were embedded (the
embed stage's ``embed_stats``) and the dense index built (its ``index_stats``: factory
string, build time, bytes, recall@10 against exact search)."""

from __future__ import annotations

import polars as pl

from ragcourt.core import catalog
from ragcourt.core.errors import RagcourtError
from ragcourt.core.io import read_table
from ragcourt.reporting import plots
from ragcourt.reporting.artifacts import Artifacts
from ragcourt.reporting.model import Section, Table, fmt, pct
from ragcourt.reporting.params import ReportingView
from ragcourt.reporting.sections.common import note_missing
from ragcourt.retrieval.long_chunks import read_stats

RETRIEVAL_METRICS = ["R", "RR", "nDCG", "P", "Success"]


def retrieval_intro(params: ReportingView) -> str:
    """The retrieval section's text: the relevance rule, and the bias of span-based recall
    across chunk sizes (a generated question's span is a whole reference chunk)."""
    rule = params.retrieval.relevance
    ref = params.qagen.reference_chunking
    ref_size = params.chunkings[ref].size if ref in params.chunkings else None
    size = f"{ref_size}-token " if ref_size else ""
    return (
        "Mean over the QA questions of each metric at the chosen cutoff, per chunking, "
        "embedder and retriever. A chunk is relevant when it overlaps the question's "
        f"ground-truth document span (it holds >= {rule.min_span_coverage:.0%} of the span, "
        f"or the span covers >= {rule.min_chunk_coverage:.0%} of the chunk; spec §1), so "
        "systems that chunk differently can be scored on the same questions. Caveat: a "
        f"generated question's span is a whole {size}chunk of the reference chunking ({ref}). "
        "Under a smaller chunking that span covers several chunks, each of them relevant "
        "(about 2 at half the size), so Recall@k is capped at min(k, n) / n for n relevant chunks "
        "(Recall@1 near 0.5) and Precision@k is inflated, while a larger chunking has about "
        "one relevant chunk. Compare chunk sizes by MRR@k and Hits@k, which need only one "
        "relevant chunk in the top k; compare Recall and Precision only within a chunk size."
    )


def retrieval(art: Artifacts, params: ReportingView) -> Section:
    """Means over questions at cutoff 5 (else the middle one) and the chunk-size plot."""
    sec = Section("retrieval", "Retrieval metrics vs chunk size", retrieval_intro(params))
    s = art.table("retrieval_summary")
    if s is None:
        return note_missing(sec, art, "retrieval_summary")
    ks = sorted(k for k in s["k"].unique().to_list() if k is not None)
    if not ks:
        sec.notes.append("The retrieval summary has no cutoff-based measures.")
        return sec
    k = 5 if 5 in ks else ks[len(ks) // 2]
    metrics = [m for m in RETRIEVAL_METRICS if s.filter(pl.col("metric") == m).height]
    if s["chunk_size"].n_unique() < 2:
        sec.notes.append(
            "Only one chunk size was evaluated: add chunkings to params.yaml or run a sweep "
            "(see the README's Sweeps section) to see a trend."
        )
    if metrics:
        sec.figures.append(plots.retrieval_vs_chunk_size(s, k, metrics))
    wide = (
        s.filter(pl.col("k") == k)
        .with_columns(pl.col("embedder").fill_null("–"))
        .pivot(
            on="metric", index=["chunking", "chunk_size", "embedder", "retriever"], values="value"
        )
        .sort(["chunk_size", "embedder", "retriever"])
    )
    cols = ["chunking", "chunk_size", "embedder", "retriever", *[m for m in metrics if m in wide]]
    wide = wide.select(cols).rename({m: f"{plots.METRIC_TITLES.get(m, m)}@{k}" for m in metrics})
    sec.tables.append(Table.from_frame(wide, f"Means over questions at cutoff {k}"))
    long_table = long_chunks_table(art, params)
    if long_table.rows:
        sec.tables.append(long_table)
    vector_table = index_table(art, params)
    if vector_table.rows:
        sec.tables.append(vector_table)
    n = s["n_queries"].max()
    sec.facts.append(("questions evaluated", fmt(n)))
    unevaluable = (
        s.group_by("chunking")
        .agg(pl.col("n_unevaluable").max())
        .filter(pl.col("n_unevaluable") > 0)
        .sort("chunking")
    )
    if unevaluable.height:
        sec.facts.append(
            (
                "questions with no relevant chunk (left out of the means)",
                ", ".join(f"{c}: {n}" for c, n in unevaluable.iter_rows()),
            )
        )
    return sec


LONG_CHUNK_COLUMNS = [
    "chunking",
    "chunk_size",
    "embedder",
    "window",
    "chunks over window",
    "long chunks",
    "flag",
]
HANDLING = {
    "windowed": "windowed (every window indexed, best window scores)",
    "pooled": "pooled (mean of the window vectors)",
    "truncated": "TRUNCATED (first window only)",
    "whole": "whole (none over the window)",
}


def long_chunks_table(art: Artifacts, params: ReportingView) -> Table:
    """Per chunk size x embedder cell: the window in the embedder's own tokens, the chunks over
    it, how they were embedded, and a flag where truncation applied or would have applied."""
    rows: list[list[str]] = []
    for chunking, cspec in sorted(params.chunkings.items(), key=lambda kv: kv[1].size):
        for embedder in params.embedders:
            path = art.root / catalog.path("embed_stats", chunking=chunking, embedder=embedder)
            if not path.is_file():
                rows.append([chunking, str(cspec.size), embedder, "–", "–", "not recorded", ""])
                continue
            try:
                st = read_stats(path)
            except RagcourtError as err:
                rows.append([chunking, str(cspec.size), embedder, "–", "–", str(err), ""])
                continue
            over = f"{st.n_over_window} of {st.n_chunks} ({pct(st.share_over_window)})"
            if not st.n_over_window:
                flag = ""
            elif st.strategy == "truncate":
                flag = f"truncated: {pct(st.share_over_window)} of chunks read in part"
            else:
                flag = f"truncation would have cut {pct(st.share_over_window)} of chunks"
            rows.append(
                [
                    chunking,
                    str(cspec.size),
                    f"{embedder} ({st.model})",
                    str(st.window),
                    over,
                    HANDLING[st.handling],
                    flag,
                ]
            )
    return Table(
        LONG_CHUNK_COLUMNS,
        rows,
        "Chunks longer than the embedder's window (its own word pieces) per chunk size x embedder",
    )


INDEX_COLUMNS = [
    "chunking",
    "embedder",
    "index (requested)",
    "vectors",
    "build s",
    "index MB",
    "recall@10 vs exact",
    "search setting",
]


def _index_row(chunking: str, embedder: str, st: dict[str, object]) -> list[str]:
    factory = str(st["factory"])
    exact = int(str(st["recall_queries"])) == 0
    recall = "1 (exact search)" if exact else f"{float(str(st['recall_at_10'])):.4f}"
    if not exact:
        recall += f" on {st['recall_queries']} stored vectors as queries"
    setting = ""
    if "HNSW" in factory:
        setting = f"efSearch {st['ef_search']}"
    elif "IVF" in factory:
        setting = f"nprobe {st['nprobe']}"
    return [
        chunking,
        embedder,
        f"{factory} ({st['requested']})",
        fmt(st["n_vectors"]),
        f"{float(str(st['build_s'])):.2f}",
        f"{int(str(st['index_bytes'])) / 1e6:.1f}",
        recall,
        setting,
    ]


def index_table(art: Artifacts, params: ReportingView) -> Table:
    """Per (chunking, embedder): the FAISS index built, its size, build time and recall@10
    against exact search (spec §1: ``embedders.<e>.index``)."""
    rows: list[list[str]] = []
    for chunking in sorted(params.chunkings, key=lambda c: params.chunkings[c].size):
        for embedder in params.embedders:
            path = art.root / catalog.path("index_stats", chunking=chunking, embedder=embedder)
            if not path.is_file():
                continue
            try:
                (st,) = read_table(path, "index_stats").to_dicts()
            except (RagcourtError, ValueError) as err:
                rows.append([chunking, embedder, str(err), "", "", "", "", ""])
                continue
            rows.append(_index_row(chunking, embedder, st))
    return Table(INDEX_COLUMNS, rows, "Dense index per chunking x embedder (FAISS index_factory)")
