"""The real dvc.yaml `answer` block under DVC in a temp git repo, with the embedded model:
a repro answers every pair; adding a system re-runs the stage but answers only that system
(persisted partitions are kept byte for byte)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from _report_data import frame
from integration.test_answer_stage import _write_chunks, _write_qa  # tests/ is on the path

from ragcourt.core.io import read_table, write_parquet
from ragcourt.orchestration.stage_graph import CODE_STEP

ROOT = Path(__file__).resolve().parents[2]


def _run(args: list[str], cwd: Path) -> str:
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout + proc.stderr


def _systems(ws: Path, *names: str) -> None:
    systems = [
        {"name": n, "retriever": "bm25", "top_k": k, "max_tokens": 16}
        for n, k in (("bm25-k1", 1), ("bm25-k2", 2))
        if n in names
    ]
    (ws / "configs/systems.yaml").write_text(
        yaml.safe_dump({"defaults": {"chunking": "c256"}, "systems": systems})
    )


@pytest.mark.slow  # DVC x3 plus 4 real generations on 2 shared cores
def test_dvc_repro_answer_block_adds_one_system(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    monkeypatch.chdir(ws)
    for d in ("ragcourt", "stages"):
        shutil.copytree(ROOT / d, ws / d, ignore=shutil.ignore_patterns("__pycache__"))
    (ws / "configs/prompts").mkdir(parents=True)
    shutil.copy(ROOT / "configs/prompts/answer.yaml", ws / "configs/prompts/answer.yaml")
    shutil.copy(ROOT / "configs/models.yaml", ws / "configs/models.yaml")
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    params["llm"]["cache_dir"] = str(tmp_path / "llm-cache")
    params["controls"]["kinds"] = []  # the systems file's own systems only
    (ws / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    # answer depends on the routes file of the llm_routes stage and its code digest
    blocks = {name: stages[name] for name in (CODE_STEP, "llm_routes", "answer")}
    (ws / "dvc.yaml").write_text(yaml.safe_dump({"stages": blocks}))
    _write_chunks()
    write_parquet(_write_qa().head(2), "data/qa/qa.parquet", "qa")
    # a dep of the stage (control systems read it); no control in this test
    write_parquet(frame("documents", []), "data/documents.parquet", "documents")
    for folder in ("data/embeddings", "data/index"):  # deps of dense systems; none here
        Path(folder).mkdir(parents=True)
        (Path(folder) / "README").write_text("no dense index in this test\n")
    # a dep of the stage (the bm25 stage's saved indexes); without a save the retriever
    # builds the index in memory
    Path("data/bm25").mkdir(parents=True)
    Path("data/bm25/README").write_text("no saved BM25 index in this test\n")
    _systems(ws, "bm25-k1")
    dvc = [sys.executable, "-m", "dvc"]
    _run(["git", "init", "-q"], ws)
    _run([*dvc, "init", "-q"], ws)

    _run([*dvc, "repro", "answer"], ws)
    out = read_table(ws / "data/answers/answers.parquet", "answers")
    assert out.height == 2 and out["error"].null_count() == 2
    first = (ws / "data/answers/systems/bm25-k1.parquet").read_bytes()
    assert "didn't change" in _run([*dvc, "repro", "answer"], ws)

    _systems(ws, "bm25-k1", "bm25-k2")
    log = _run([*dvc, "repro", "answer"], ws)
    assert "bm25-k1: partition is fresh, kept" in log
    assert (ws / "data/answers/systems/bm25-k1.parquet").read_bytes() == first
    out = read_table(ws / "data/answers/answers.parquet", "answers")
    assert out["system"].to_list() == ["bm25-k1"] * 2 + ["bm25-k2"] * 2
    assert "llm_answer.json" in _run([*dvc, "metrics", "show"], ws)
