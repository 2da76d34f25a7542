"""DVC side of orchestration on a tiny git + DVC project using the repository's dvc.yaml and
.dvc/config: the default remote restores every artifact of the stages run (ingest through
retrieval_eval; no LLM stage) in a fresh clone without re-running a stage, and a chunk-size
sweep runs as queued DVC experiments compared by ``dvc exp show``."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from _tiny_project import ROOT, make_project, sh, tool_env

from ragcourt.orchestration.sweeps import queue_dvc_experiments

DVC = [sys.executable, "-m", "dvc"]
TARGET = "retrieval_eval"


def _data_files(ws: Path) -> dict[str, bytes]:
    return {
        p.relative_to(ws).as_posix(): p.read_bytes()
        for p in sorted((ws / "data").rglob("*"))
        if p.is_file() and "corpus" not in p.parts
    }


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A committed tiny project after `dvc repro retrieval_eval` (remote as shipped)."""
    base = tmp_path_factory.mktemp("dvcproj")
    ws = make_project(base / "repo", chunkings={"c16": (16, 2)}, dvc=True)
    shutil.copy(ROOT / ".dvc/config", ws / ".dvc/config")  # the documented default remote
    sh([*DVC, "repro", TARGET], ws)
    sh(["git", "add", "-A"], ws)  # dvc.lock and the cache: false metrics files
    sh(["git", "commit", "-qm", "pipeline results"], ws)
    yield ws


@pytest.mark.slow  # a DVC pipeline run with MiniLM + push + clone + pull (~1.5 min)
def test_push_then_pull_in_a_fresh_clone_restores_everything_without_rerunning(
    repo: Path,
) -> None:
    remote = repo.parent / "ragcourt-remote"  # ../ragcourt-remote, as .dvc/config says
    assert not remote.exists()
    sh([*DVC, "push"], repo)
    assert any(p.is_file() for p in remote.rglob("*"))
    clone = repo.parent / "clone"
    sh(["git", "clone", "-q", str(repo), str(clone)], repo.parent)
    assert not (clone / "data/documents.parquet").exists()
    sh([*DVC, "pull", "--with-deps", TARGET], clone)  # the stages this project ran
    original, restored = _data_files(repo), _data_files(clone)
    assert sorted(restored) == sorted(original)
    assert {"data/index/c16__minilm.faiss", "data/retrieval/summary.parquet"} <= set(restored)
    assert all(restored[k] == original[k] for k in original)
    # everything is up to date: nothing runs (llm_routes is checked by `ragcourt run`, not
    # run every time)
    out = sh([*DVC, "status", "--json", "--with-deps", TARGET], clone)
    status = json.loads(out[out.index("{") : out.rindex("}") + 1]) if "{" in out else {}
    assert status == {}, status
    out = sh([*DVC, "repro", TARGET], clone)
    assert re.findall(r"Running stage '([^']+)'", out) == [], out
    assert "didn't change" in out


@pytest.mark.slow  # two queued DVC experiments, each re-chunking, embedding, evaluating (~2 min)
def test_chunk_size_sweep_as_queued_dvc_experiments(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", tool_env()["PATH"])  # stage commands call `python`
    cmds = queue_dvc_experiments(repo, {"chunkings.c16.size": [12, 40]}, until=TARGET)
    assert len(cmds) == 2
    proc = subprocess.run(
        [*DVC, "exp", "show", "--json"], cwd=repo, capture_output=True, text=True, check=True
    )
    shown = json.loads(proc.stdout)
    recall: dict[int, float] = {}
    for rev in shown:
        for exp in rev.get("experiments") or []:
            for run in exp["revs"]:
                data = run["data"]
                size = data["params"]["params.yaml"]["data"]["chunkings"]["c16"]["size"]
                metrics = data["metrics"]["data/retrieval/metrics.json"]["data"]
                recall[size] = metrics["c16"]["minilm"]["dense"]["R@3"]
    assert sorted(recall) == [12, 40]
    assert all(0.0 <= v <= 1.0 for v in recall.values())
    table = sh([*DVC, "exp", "show", "--md", "--only-changed"], repo)
    assert "chunkings.c16.size" in table and "c16.minilm.dense.R@3" in table
