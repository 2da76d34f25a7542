"""The Prefect pipeline flow on a tiny project (real stages, real MiniLM, no LLM: the QA set
is bring-your-own): input-keyed caching, failure reporting, artifacts, and the Dask runner."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import yaml
from _report_data import write_artifacts
from _tiny_project import make_project

from flows.pipeline import pipeline
from ragcourt.core.errors import RagcourtError


@pytest.fixture(scope="module", autouse=True)
def prefect_api() -> Iterator[None]:
    """One temporary Prefect server (temp database) for the whole module."""
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield


def _states(results: list[dict[str, Any]]) -> dict[str, str]:
    return {r["call"]: r["state"] for r in results}


def _ran(results: list[dict[str, Any]]) -> set[str]:
    return {c for c, s in _states(results).items() if s != "Cached"}


def test_rerun_skips_finished_work_and_redoes_only_what_changed(tmp_path: Path) -> None:
    ws = make_project(tmp_path / "p")

    def run() -> list[dict[str, Any]]:
        return pipeline(workdir=str(ws), until="chunk", publish=False)

    assert _ran(run()) == {"ingest", "chunk[c16]", "chunk[c32]"}
    assert _ran(run()) == set()  # nothing changed: every call is served from the cache

    (ws / "data/chunks/c32.parquet").unlink()  # a deleted output is made again
    assert _ran(run()) == {"chunk[c32]"}

    (ws / "data/chunks/c16.parquet").write_bytes(b"overwritten")  # an output changed on disk
    assert _ran(run()) == {"chunk[c16]"}

    params = yaml.safe_load((ws / "params.yaml").read_text())
    params["chunkings"]["c16"]["size"] = 20  # a param of one partition
    (ws / "params.yaml").write_text(yaml.safe_dump(params))
    assert _ran(run()) == {"chunk[c16]"}
    (ws / "data/corpus/extra.txt").write_text("A fourth document about lighthouses and tea.")
    assert _ran(run()) == {"ingest", "chunk[c16]", "chunk[c32]"}  # an input file changed


@pytest.mark.slow  # MiniLM embeddings and retrieval evaluation of two chunkings (~1 min)
def test_unchanged_rebuilt_output_keeps_downstream_cached(tmp_path: Path) -> None:
    ws = make_project(tmp_path / "p")

    def run() -> list[dict[str, Any]]:
        return pipeline(workdir=str(ws), until="retrieval_eval", publish=False)

    assert _ran(run()) == {
        "ingest",
        "chunk[c16]",
        "chunk[c32]",
        "bm25[c16]",
        "bm25[c32]",
        "embed[c16,minilm]",
        "embed[c32,minilm]",
        "llm_routes",  # qagen's model routes
        "qagen",
        "retrieval_eval",
    }
    summary = pl.read_parquet(ws / "data/retrieval/summary.parquet")
    assert set(summary["chunking"]) == {"c16", "c32"}
    (ws / "data/chunks/c32.parquet").unlink()
    # chunking is deterministic: the rebuilt file has the same bytes, so embed stays cached
    assert _ran(run()) == {"chunk[c32]"}
    params = yaml.safe_load((ws / "params.yaml").read_text())
    params["retrieval"]["ks"] = [1, 2]
    (ws / "params.yaml").write_text(yaml.safe_dump(params))
    assert _ran(run()) == {"retrieval_eval"}


def test_stage_failure_names_the_call_and_stops_downstream(tmp_path: Path) -> None:
    ws = make_project(tmp_path / "p")
    for f in (ws / "data/corpus").iterdir():
        f.write_text("")  # every document empty: ingest rejects them all
    with pytest.raises(RagcourtError) as err:
        pipeline(workdir=str(ws), until="chunk", publish=False)
    msg = str(err.value)
    assert "ingest: Failed" in msg
    assert not (ws / "data/chunks").exists()


def test_report_task_and_prefect_artifacts(tmp_path: Path) -> None:
    from prefect import flow
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    from ragcourt.orchestration.artifacts import publish_artifacts

    def published() -> dict[str, Any]:
        with get_client(sync_client=True) as client:
            arts = client.read_artifacts(
                artifact_filter=ArtifactFilter(key=ArtifactFilterKey(like_="ragcourt-"))
            )
        return {a.key: a for a in arts if a.key is not None}

    ws = make_project(tmp_path / "p")
    write_artifacts(ws)
    results = pipeline(workdir=str(ws), only=["report"])
    assert _states(results) == {"report": "Completed"}
    assert "1562 [1532, 1592]" in (ws / "data/report/report.html").read_text()
    # the run covered only the report: older leaderboard/retrieval/DAFE results stay unpublished
    assert set(published()) == {"ragcourt-report"}

    publish = flow(name="publish-artifacts")(publish_artifacts)  # artifacts belong to a run
    keys = publish(ws, "params.yaml", ["retrieval_eval", "judge", "tournament"])
    assert sorted(keys) == [
        "ragcourt-dafe-summary",
        "ragcourt-leaderboard",
        "ragcourt-retrieval-summary",
    ]
    by_key = published()
    assert {
        "ragcourt-leaderboard",
        "ragcourt-retrieval-summary",
        "ragcourt-dafe-summary",
        "ragcourt-report",
    } <= set(by_key)
    board = by_key["ragcourt-leaderboard"].data
    assert isinstance(board, str) and "dense-k5" in board and "1561.5" in board
    assert "judge calls saved" in str(by_key["ragcourt-dafe-summary"].data)


def _frames_equal(a: Path, b: Path) -> None:
    left, right = pl.read_parquet(a), pl.read_parquet(b)
    assert left.columns == right.columns
    if a.name.endswith(".stats.parquet"):  # an index's build time is a measurement
        left, right = left.drop("build_s"), right.drop("build_s")
    assert left.equals(right), a  # vectors too: MKL's strict mode (offline defaults)


@pytest.mark.slow  # a Dask LocalCluster of 2 processes, each loading MiniLM (~1 min)
def test_dask_runner_gives_the_same_artifacts_as_threads(tmp_path: Path) -> None:
    import faiss

    threads = make_project(tmp_path / "threads")
    dask = tmp_path / "dask"
    shutil.copytree(threads, dask)
    a = pipeline(workdir=str(threads), until="embed", publish=False)
    b = pipeline(workdir=str(dask), until="embed", task_runner="dask", workers=2, publish=False)
    assert _states(a).keys() == _states(b).keys()
    assert set(_states(b).values()) == {"Completed"}

    def listing(root: Path) -> list[str]:
        return sorted(
            p.relative_to(root).as_posix()
            for p in (root / "data").rglob("*.*")
            if "corpus" not in p.parts
        )

    files = listing(threads)
    assert files == listing(dask)
    assert {
        "data/chunks/c16.parquet",
        "data/chunks/c32.parquet",
        "data/documents.parquet",
        "data/embeddings/c16__minilm.parquet",
        "data/embeddings/c32__minilm.parquet",
        "data/index/c16__minilm.faiss",
        "data/index/c32__minilm.faiss",
        "data/rejected_documents.parquet",
    } <= set(files)
    assert any(f.startswith("data/bm25/c16/") and f.endswith(".npy") for f in files)
    for rel in map(Path, files):
        if rel.suffix == ".parquet":
            _frames_equal(threads / rel, dask / rel)
        elif rel.suffix == ".faiss":
            ia, ib = faiss.read_index(str(threads / rel)), faiss.read_index(str(dask / rel))
            assert ia.ntotal == ib.ntotal and ia.d == ib.d
        if rel.suffix in {".faiss", ".npy"}:  # index stats (.json) hold build times
            assert (threads / rel).read_bytes() == (dask / rel).read_bytes(), rel
