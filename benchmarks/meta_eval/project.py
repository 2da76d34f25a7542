"""The temp copy of the project the meta-evaluation runs in, and its preparing stages."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from benchmarks._common import ROOT
from benchmarks.meta_eval.results import Calls
from benchmarks.meta_eval.systems import SYSTEMS_YAML
from ragcourt.core import catalog
from ragcourt.core.io import read_table
from ragcourt.orchestration.params import Params, load_params
from ragcourt.orchestration.profiles import apply_profile


def make_project(
    work: Path,
    corpus: Path,
    max_docs: int | None,
    model: str,
    cache_dir: Path,
    systems: dict[str, Any] | None = None,
    only_files: set[str] | None = None,
    profile: str | None = None,
) -> Params:
    """A temp copy of the project in ``work`` (the cwd afterwards) and its params; the
    systems file holds ``systems`` (default: the ladder, :data:`SYSTEMS_YAML`); the corpus is
    ``corpus``'s files (only those named in ``only_files`` when given, then ``max_docs``);
    ``profile``: that params profile (``configs/profiles/NAME.yaml``) written into the copy."""
    work.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "params.yaml", work / "params.yaml")
    for folder in ("configs",):
        shutil.copytree(ROOT / folder, work / folder, dirs_exist_ok=True)
    if profile:
        apply_profile(profile, work / "params.yaml", root=work)
    docs = sorted(p for p in corpus.iterdir() if p.is_file() and not p.name.startswith("."))
    if only_files is not None:
        missing = sorted(only_files - {p.name for p in docs})
        if missing:
            raise SystemExit(f"{corpus}: files named in the QA file are missing: {missing}")
        docs = [p for p in docs if p.name in only_files]
    docs = docs[:max_docs] if max_docs else docs
    target = work / "corpus"
    if target.exists():
        shutil.rmtree(target)
    target.mkdir()
    for p in docs:
        shutil.copy(p, target / p.name)
    body = SYSTEMS_YAML if systems is None else systems
    (work / "systems.yaml").write_text(yaml.safe_dump(body, sort_keys=False))
    os.chdir(work)
    params = load_params(work / "params.yaml").model_copy(deep=True)
    params.corpus.dir = "corpus"
    params.systems_file = "systems.yaml"
    params.llm.model = model
    params.llm.cache_dir = str(cache_dir)
    params.retrieval.retrievers = ["dense"]
    params.controls.kinds = []
    return params


def stage_calls(metrics_dir: str, stages: Sequence[str]) -> Calls:
    """Gateway requests, model calls and model time of ``stages`` from their LLM metrics files
    (each file removed once read: a later configuration that skips the stage must not count it)."""
    req = calls = 0
    t = 0.0
    for stage in stages:
        path = catalog.llm_metrics(metrics_dir, stage)
        if path.exists():
            total = json.loads(path.read_text())["total"]
            req += total["requests"]
            calls += total["model_calls"]
            t += total["model_time_s"]
            path.unlink()  # a later configuration that skips the stage must not count it
    return Calls(requests=req, model_calls=calls, model_time_s=round(t, 1))


def gold_qa_file(gold: Path, target: Path) -> Path:
    """A bring-your-own QA file (``qagen.qa_file``) from hand-written items
    ``{question_id, file, question, answer, quote}``: the span is where ``quote`` (a verbatim
    phrase of the corpus file) occurs in the ingested document's text."""
    docs = read_table(catalog.path("documents"), "documents")
    cols = docs.select("doc_id", "path", "text").iter_rows()
    by_file = {Path(p).name: (d, t) for d, p, t in cols}
    rows = []
    for line in gold.read_text().splitlines():
        item = json.loads(line)
        if item["file"] not in by_file:
            continue  # the file is not in this (--max-docs) corpus
        doc_id, text = by_file[item["file"]]
        start = text.find(item["quote"])
        if start < 0:
            raise SystemExit(f"{gold}: quote of {item['question_id']} not in {item['file']}")
        rows.append(
            {"question_id": item["question_id"], "question": item["question"],
             "reference_answers": [item["answer"]], "doc_id": doc_id, "char_start": start,
             "char_end": start + len(item["quote"])}
        )  # fmt: skip
    target.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return target


def prepare(params: Params, gold: Path | None = None) -> tuple[dict[str, float], Calls]:
    """ingest, chunk, embed, qagen, answer (the real stage functions); wall time per stage.
    With ``gold`` the QA set is that hand-written file (qagen reads it as ``qa_file``)."""
    from ragcourt.answering import stage as answer
    from ragcourt.corpus import chunking, ingest
    from ragcourt.qagen import stage as qagen
    from ragcourt.retrieval import indexing

    steps: list[tuple[str, Any]] = [
        ("ingest", lambda: ingest.run(params)),
        ("chunk", lambda: [chunking.run(params, c) for c in params.chunkings]),
        ("embed", lambda: indexing.run(params, "c256", "minilm")),
        ("qagen", lambda: _qagen(params, gold, qagen.run)),
        ("answer", lambda: answer.run(params)),
    ]
    wall: dict[str, float] = {}
    for name, step in steps:
        t0 = time.perf_counter()
        step()
        wall[name] = round(time.perf_counter() - t0, 1)
        print(f"[meta-eval] {name}: {wall[name]} s", file=sys.stderr, flush=True)
    return wall, stage_calls(params.llm.metrics_dir, ["qagen", "answer"])


def _qagen(params: Params, gold: Path | None, run: Any) -> None:
    if gold is not None:
        params.qagen.qa_file = str(gold_qa_file(gold, Path("gold_qa.jsonl").resolve()))
    run(params)
