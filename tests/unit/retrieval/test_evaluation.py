"""retrieval_eval on a tiny real corpus: real ingest, chunking, MiniLM embeddings, FAISS and
BM25; questions whose ground-truth spans are known sentences of the documents."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
import yaml

from ragcourt.core.errors import RagcourtError
from ragcourt.core.io import read_table, write_parquet
from ragcourt.core.schemas import TABLES, frame_schema
from ragcourt.corpus import chunking as chunk
from ragcourt.corpus import ingest
from ragcourt.orchestration.params import parse_params
from ragcourt.retrieval import indexing as embed
from ragcourt.retrieval.evaluation import (
    UNEVALUABLE_SCHEMA,
    evaluation_grid,
    metrics_json,
    summarize,
)
from ragcourt.retrieval.evaluation import run as run_eval

ROOT = Path(__file__).resolve().parents[3]

DOCS = {
    "harbour.txt": [
        "The harbour office of Valparaiso logged every tea shipment in a green ledger.",
        "Customs officers weighed the crates of iron twice before the ships could leave.",
        "A lighthouse keeper named Ortega reported three storms during the winter of 1851.",
        "Fishermen sold anchovies at the northern pier every morning before sunrise.",
    ],
    "railway.txt": [
        "The first railway between Santiago and Valparaiso opened to passengers in 1863.",
        "Engineers cut eleven tunnels through the coastal mountains for the line.",
        "Steam locomotives were imported from Manchester and assembled in Quillota.",
        "Ticket prices fell by half after the second track was completed in 1870.",
    ],
    "mining.txt": [
        "Copper from the Atacama mines was smelted in furnaces fired with imported coal.",
        "Miners at Chanarcillo discovered a silver outcrop while chasing a lost mule.",
        "Nitrate exports funded most of the national budget until the Great War.",
        "Water for the mining camps arrived by mule train from distant oases.",
    ],
}
QUESTIONS = [
    ("q1", "harbour.txt", 2, "Who reported three storms in the winter of 1851?"),
    ("q2", "railway.txt", 1, "How many tunnels were cut through the coastal mountains?"),
    ("q3", "mining.txt", 1, "How was the silver outcrop at Chanarcillo discovered?"),
    ("q4", "railway.txt", 3, "When did ticket prices fall by half?"),
]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("reval")
    (tmp / "configs").symlink_to(ROOT / "configs", target_is_directory=True)
    corpus = tmp / "data" / "corpus"
    corpus.mkdir(parents=True)
    for name, sentences in DOCS.items():
        (corpus / name).write_text(" ".join(sentences), encoding="utf-8")
    params = {
        "chunkings": {"c16": {"size": 16, "overlap": 4}, "c40": {"size": 40, "overlap": 8}},
        "embedders": {"minilm": {"model": "all-minilm-l6-v2", "batch_size": 16}},
        "retrieval": {"retrievers": ["dense", "bm25", "hybrid"], "depth": 5, "ks": [1, 3, 5]},
        "qagen": {"reference_chunking": "c40"},
    }
    (tmp / "params.yaml").write_text(yaml.safe_dump(params), encoding="utf-8")
    mp = pytest.MonkeyPatch()
    mp.chdir(tmp)
    try:
        p = parse_params(params)
        ingest.run(p)
        for c in p.chunkings:
            chunk.run(p, chunking=c)
            embed.run(p, chunking=c, embedder="minilm")
        docs = read_table("data/documents.parquet", "documents")
        by_path = {Path(r["path"]).name: r for r in docs.iter_rows(named=True)}
        rows = []
        for qid, name, idx, question in QUESTIONS:
            doc = by_path[name]
            sentence = DOCS[name][idx]
            start = doc["text"].index(sentence)
            rows.append({"question_id": qid, "question": question, "reference_answers": ["x"],
                         "doc_id": doc["doc_id"], "char_start": start,
                         "char_end": start + len(sentence), "context": sentence})  # fmt: skip
        # a question whose document is in no chunking: it cannot be scored anywhere
        rows.append({"question_id": "q_orphan", "question": "Where is Atlantis?",
                     "reference_answers": ["x"], "doc_id": "not-in-corpus", "char_start": 0,
                     "char_end": 10, "context": "0123456789"})  # fmt: skip
        qa = pl.DataFrame(rows).with_columns(
            pl.lit(None, dtype=t).alias(c)
            for c, t in frame_schema("qa").items()
            if c not in rows[0]
        )
        write_parquet(qa.select(list(TABLES["qa"])), "data/qa/qa.parquet", "qa")
        run_eval(p)
    finally:
        mp.undo()
    return tmp


def test_grid_evaluates_bm25_once_per_chunking() -> None:
    p = parse_params({"embedders": {"a": {"model": "all-minilm-l6-v2"},
                                    "b": {"model": "all-minilm-l6-v2"}}})  # fmt: skip
    grid = list(evaluation_grid(p))
    assert ("c256", None, "bm25") in grid
    assert sum(1 for g in grid if g[2] == "bm25") == len(p.chunkings)
    assert sum(1 for g in grid if g[2] == "dense") == len(p.chunkings) * 2


def test_per_query_rows_cover_every_config_question_and_measure(project: Path) -> None:
    per = read_table(project / "data/retrieval/per_query.parquet", "retrieval_per_query")
    configs = per.select("chunking", "embedder", "retriever").unique()
    assert configs.height == 2 * 3  # 2 chunkings x (dense, hybrid with minilm + bm25)
    assert (
        per.filter(pl.col("retriever") == "bm25")["embedder"].null_count()
        == per.filter(pl.col("retriever") == "bm25").height
    )
    measures = set(per["measure"].unique())
    assert measures == {f"{m}@{k}" for m in ("R", "P", "RR", "nDCG", "Success") for k in (1, 3, 5)}
    assert per.height == 6 * len(QUESTIONS) * len(measures)
    assert per["value"].is_between(0, 1).all()


def test_every_retriever_finds_each_span_in_its_top_5(project: Path) -> None:
    per = read_table(project / "data/retrieval/per_query.parquet", "retrieval_per_query")
    hits = per.filter(pl.col("measure") == "Success@5")
    # each question shares its rare words (Ortega's storms, eleven tunnels, ...) with its span,
    # so a mis-wired query id, qrel or run would show up here as a miss
    assert hits.height == 6 * len(QUESTIONS)
    assert hits["value"].to_list() == [1.0] * hits.height


def test_empty_qa_set_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write_parquet(pl.DataFrame(schema=frame_schema("qa")), "data/qa/qa.parquet", "qa")
    with pytest.raises(RagcourtError, match="no QA items"):
        run_eval(parse_params({}))


def test_summary_is_the_mean_of_per_query_and_metrics_json_matches(project: Path) -> None:
    per = read_table(project / "data/retrieval/per_query.parquet", "retrieval_per_query")
    summary = read_table(project / "data/retrieval/summary.parquet", "retrieval_summary")
    sel = (
        (pl.col("chunking") == "c16")
        & (pl.col("retriever") == "dense")
        & (pl.col("measure") == "RR@5")
    )
    row = summary.filter(sel).row(0, named=True)
    mean = per.filter(sel)["value"].mean()
    assert row["value"] == pytest.approx(mean)
    assert (row["metric"], row["k"], row["chunk_size"], row["n_queries"]) == ("RR", 5, 16, 4)
    metrics = json.loads((project / "data/retrieval/metrics.json").read_text())
    assert metrics["c16"]["minilm"]["dense"]["RR@5"] == pytest.approx(mean, abs=1e-6)
    assert set(metrics["c40"]["-"]) == {"bm25"}


def test_recall_plot_is_a_png(project: Path) -> None:
    png = (project / "data/retrieval/recall_vs_chunk_size.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5_000


def test_unevaluable_questions_are_counted_not_averaged(project: Path) -> None:
    per = read_table(project / "data/retrieval/per_query.parquet", "retrieval_per_query")
    assert "q_orphan" not in set(per["query_id"])
    summary = read_table(project / "data/retrieval/summary.parquet", "retrieval_summary")
    assert set(summary["n_queries"]) == {len(QUESTIONS)}
    assert set(summary["n_unevaluable"]) == {1}
    metrics = json.loads((project / "data/retrieval/metrics.json").read_text())
    assert metrics["c16"]["minilm"]["dense"]["n_unevaluable"] == 1
    assert metrics["c40"]["-"]["bm25"]["n_unevaluable"] == 1


def test_config_without_evaluable_questions_keeps_null_summary_rows() -> None:
    p = parse_params({"retrieval": {"ks": [1, 3]}})
    per = pl.DataFrame(
        {
            "chunking": ["c256", "c256"],
            "embedder": [None, None],
            "retriever": ["bm25", "bm25"],
            "query_id": ["q1", "q1"],
            "measure": ["R@1", "R@3"],
            "value": [0.0, 1.0],
        },
        schema=frame_schema("retrieval_per_query"),
    )
    counts = pl.DataFrame(
        [("c256", None, "bm25", 1), ("c256", "minilm", "dense", 2)],
        schema=UNEVALUABLE_SCHEMA,
        orient="row",
    )
    summary = summarize(per, p, counts)
    bm25 = summary.filter(pl.col("retriever") == "bm25")
    assert bm25["n_unevaluable"].to_list() == [1, 1]
    assert bm25.filter(pl.col("measure") == "R@3")["value"].to_list() == [1.0]
    dense = summary.filter(pl.col("retriever") == "dense")
    assert dense.height == 5 * 2  # every measure of ks [1, 3], each with no value
    assert dense["value"].null_count() == dense.height
    assert set(dense["n_queries"]) == {0} and set(dense["n_unevaluable"]) == {2}
    m = metrics_json(summary)
    assert m["c256"]["minilm"]["dense"]["R@1"] is None
    assert m["c256"]["minilm"]["dense"]["n_unevaluable"] == 2
    assert m["c256"]["-"]["bm25"]["R@3"] == 1.0
