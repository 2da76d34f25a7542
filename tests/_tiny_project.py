"""A tiny ragcourt project in a temp folder for orchestration tests (flows, CLI, DVC).

Three short documents, small chunkings, the MiniLM embedder and a bring-your-own QA file (so
QA "generation" and retrieval evaluation need no LLM). ``dvc=True`` also copies ragcourt/,
stages/ and .dvcignore, generates dvc.yaml for it and makes it a committed git + DVC
repository.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
CORPUS = {
    "harbour.txt": "The harbour office logged every tea shipment in a green ledger. "
    "A lighthouse keeper named Ortega reported three storms during the winter of 1851. "
    "Fishermen repaired their nets in the old customs shed when the weather turned.",
    "railway.txt": "The first railway between Santiago and Valparaiso opened in 1863. "
    "Engineers cut eleven tunnels through the coastal mountains for the line. "
    "Passengers paid two pesos for a third-class seat on the morning train.",
    "orchard.txt": "The orchard on the northern slope grew apples, pears and quinces. "
    "A frost in April destroyed most of the blossoms in the year the well ran dry. "
    "The cooperative sold its cider in stone bottles stamped with a pear.",
}


def tool_env() -> dict[str, str]:
    """Environment for child processes: this interpreter's bin first on PATH (for `python`,
    `dvc`), analytics off."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.setdefault("DVC_NO_ANALYTICS", "1")
    return env


def sh(args: list[str], cwd: Path, check: bool = True) -> str:
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True, env=tool_env())
    if check:
        assert proc.returncode == 0, f"{args}:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout + proc.stderr


def params_data(chunkings: dict[str, tuple[int, int]], embedders: list[str]) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((ROOT / "params.yaml").read_text())  # all tracked keys
    models = {"minilm": "all-minilm-l6-v2", "mpnet": "all-mpnet-base-v2"}
    data["chunkings"] = {k: {"size": s, "overlap": o} for k, (s, o) in chunkings.items()}
    data["embedders"] = {e: {"model": models[e], "batch_size": 16} for e in embedders}
    data["retrieval"] |= {"retrievers": ["dense", "bm25"], "depth": 3, "ks": [1, 3]}
    data["qagen"] |= {"reference_chunking": next(iter(chunkings)), "qa_file": "my_qa.jsonl"}
    return data


def write_byo_qa(ws: Path) -> None:
    """One question per document on its second sentence (span found verbatim)."""
    from ragcourt.corpus.ingest import ingest
    from ragcourt.corpus.params import CorpusParams

    docs, _ = ingest(CorpusParams(dir=str(ws / "data/corpus")))
    items = []
    for i, r in enumerate(docs.sort("doc_id").iter_rows(named=True)):
        sentence = r["text"].split(". ")[1]
        start = r["text"].index(sentence)
        items.append(
            {
                "question_id": f"u{i}",
                "question": f"What does the text say about {sentence.split()[1]}?",
                "reference_answers": [sentence],
                "doc_id": r["doc_id"],
                "char_start": start,
                "char_end": start + len(sentence),
            }
        )
    (ws / "my_qa.jsonl").write_text("".join(json.dumps(x) + "\n" for x in items))


def make_project(
    ws: Path,
    chunkings: dict[str, tuple[int, int]] | None = None,
    embedders: list[str] | None = None,
    dvc: bool = False,
) -> Path:
    chunkings = chunkings or {"c16": (16, 2), "c32": (32, 4)}
    ws.mkdir(parents=True, exist_ok=True)
    shutil.copytree(ROOT / "configs", ws / "configs", dirs_exist_ok=True)
    (ws / "data/corpus").mkdir(parents=True, exist_ok=True)
    for name, text in CORPUS.items():
        (ws / "data/corpus" / name).write_text(text, encoding="utf-8")
    data = params_data(chunkings, embedders or ["minilm"])
    (ws / "params.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    systems = {  # on this project's chunkings and embedder (dvc generate validates them)
        "defaults": {"chunking": next(iter(chunkings)), "embedder": next(iter(data["embedders"]))},
        "systems": [
            {"name": "dense-k3", "retriever": "dense", "top_k": 3},
            {"name": "bm25-k3", "retriever": "bm25", "top_k": 3},
        ],
    }
    (ws / "configs/systems.yaml").write_text(yaml.safe_dump(systems, sort_keys=False))
    write_byo_qa(ws)
    if dvc:
        from ragcourt.orchestration import dvc_yaml

        skip = shutil.ignore_patterns("__pycache__", "*.pyc")
        for folder in ("ragcourt", "stages"):  # dvc.yaml's code deps
            shutil.copytree(ROOT / folder, ws / folder, ignore=skip)
        dvc_yaml.write(ws)  # for this project's params (its QA file is a dep)
        shutil.copy(ROOT / ".dvcignore", ws / ".dvcignore")
        (ws / ".gitignore").write_text(".ragcourt/\n__pycache__/\n")
        sh(["git", "init", "-q"], ws)
        sh(["git", "config", "user.email", "test@example.com"], ws)
        sh(["git", "config", "user.name", "test"], ws)
        sh([sys.executable, "-m", "dvc", "init", "-q"], ws)
        sh(["git", "add", "-A"], ws)
        sh(["git", "commit", "-qm", "tiny project"], ws)
    return ws
