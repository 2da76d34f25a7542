"""The real dvc.yaml blocks ingest -> chunk -> embed -> qagen (bring-your-own QA file) ->
retrieval_eval run under DVC in a temp git repo; a second repro changes nothing."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ragcourt.core import catalog
from ragcourt.core.io import read_table
from ragcourt.orchestration import dvc_yaml
from ragcourt.orchestration.stage_graph import CODE_STEP

ROOT = Path(__file__).resolve().parents[2]
SENTENCES = {
    "harbour.txt": "The harbour office logged every tea shipment in a green ledger. "
    "A lighthouse keeper named Ortega reported three storms during the winter of 1851.",
    "railway.txt": "The first railway between Santiago and Valparaiso opened in 1863. "
    "Engineers cut eleven tunnels through the coastal mountains for the line.",
}
STAGES = (CODE_STEP, "ingest", "chunk", "bm25", "embed", "qagen", "retrieval_eval")


def _run(args: list[str], cwd: Path) -> str:
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout + proc.stderr


@pytest.mark.slow  # ~1-2 min: several DVC invocations and MiniLM loads on 2 shared cores
def test_dvc_repro_qagen_byo_and_retrieval_eval(tmp_path: Path) -> None:
    ws = tmp_path
    for d in ("ragcourt", "stages", "configs"):
        shutil.copytree(ROOT / d, ws / d, ignore=shutil.ignore_patterns("__pycache__"))
    (ws / "data/corpus").mkdir(parents=True)
    for name, text in SENTENCES.items():
        (ws / "data/corpus" / name).write_text(text, encoding="utf-8")
    params = yaml.safe_load((ROOT / "params.yaml").read_text())  # DVC needs every tracked key
    params |= {
        "chunkings": {"c12": {"size": 12, "overlap": 2}, "c24": {"size": 24, "overlap": 4}},
        "embedders": {"minilm": {"model": "all-minilm-l6-v2", "batch_size": 16}},
        "retrieval": {"retrievers": ["dense", "bm25", "hybrid"], "depth": 3, "ks": [1, 3]},
    }
    params["qagen"] |= {"reference_chunking": "c24", "qa_file": "my_qa.jsonl"}
    (ws / "params.yaml").write_text(yaml.safe_dump(params))
    systems = {"defaults": {"chunking": "c24", "embedder": "minilm"},
               "systems": [{"name": "dense-k3", "retriever": "dense", "top_k": 3}]}  # fmt: skip
    (ws / "configs/systems.yaml").write_text(yaml.safe_dump(systems))
    blocks = yaml.safe_load(dvc_yaml.render(ws))["stages"]  # for this project: its QA file
    (ws / "dvc.yaml").write_text(yaml.safe_dump({"stages": {s: blocks[s] for s in STAGES}}))
    dvc = [sys.executable, "-m", "dvc"]
    _run(["git", "init", "-q"], ws)
    _run([*dvc, "init", "-q"], ws)
    _run([*dvc, "repro", "ingest"], ws)
    routes = ws / catalog.path("llm_routes")  # the llm_routes stage's file: a plain input here
    routes.parent.mkdir(parents=True, exist_ok=True)
    routes.write_text("{}\n")

    docs = read_table(ws / "data/documents.parquet", "documents")
    items = []
    for i, r in enumerate(docs.iter_rows(named=True)):
        sentence = r["text"].split(". ")[1]
        start = r["text"].index(sentence)
        items.append({"question_id": f"u{i}", "question": f"What about: {sentence[:30]}?",
                      "reference_answers": [sentence], "doc_id": r["doc_id"],
                      "char_start": start, "char_end": start + len(sentence)})  # fmt: skip
    (ws / "my_qa.jsonl").write_text("".join(json.dumps(x) + "\n" for x in items))

    _run([*dvc, "repro", "retrieval_eval"], ws)
    qa = read_table(ws / "data/qa/qa.parquet", "qa")
    assert sorted(qa["question_id"].to_list()) == ["u0", "u1"]
    summary = read_table(ws / "data/retrieval/summary.parquet", "retrieval_summary")
    assert set(summary["chunking"]) == {"c12", "c24"}
    assert (ws / "data/retrieval/recall_vs_chunk_size.png").is_file()

    assert "didn't change" in _run([*dvc, "repro", "retrieval_eval"], ws)
    metrics = _run([*dvc, "metrics", "show"], ws)
    assert "data/retrieval/metrics.json" in metrics and "data/qa/summary.json" in metrics
