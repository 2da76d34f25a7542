"""Markup rendering at ingest: the demo's chunk tables before and after, and markup left in
the chunks of a documentation folder before and after.

Both compare this checkout's ``ragcourt`` with the one of a base commit (``git archive``
into a temp folder, run in a subprocess with it first on ``PYTHONPATH``), ingesting and
chunking the same folder with each.

    python -m benchmarks markup identity --base <commit>       # the demo speeches
    python -m benchmarks markup leakage --base <commit> --corpus DIR [--json out.json]
    python -m benchmarks markup qagen --base <commit> --after <commit> --corpus DIR --attempts 16
    python -m benchmarks markup sheet --json qagen.json --out sheet.md --key key.json
    python -m benchmarks markup score --labels labels.json --key key.json

``identity``: for each chunking of params.yaml, the chunk table's columns as the base wrote
them must be equal in both runs, and so must the Parquet file of those columns (sha256).
``qagen``: the qagen stage of params.yaml (answer-first, the local writer and reader) on
``DIR`` with ``--attempts`` candidates, by ``base`` and by ``after`` (code, params.yaml and
configs of each commit), each in a fresh temp project with an empty reply cache: yield,
rejections, and every accepted item (question, answer, title, section, chunk) for hand
labelling.
``sheet``: every accepted item of a ``qagen`` result, both runs shuffled together (seed 0)
under neutral ids, as a Markdown sheet showing question, answer and chunk only (no run, no
title, no filter score); the id -> run key goes to a separate file. ``score``: the share of
items labelled good per run, from hand labels ``{"L01": "good" | "bad: why", ...}``.
``leakage``: chunks (c512, the reference chunking) with role syntax (``:[a-z]+:``, the
acceptance check's pattern; and a role call ``:name:`x```), a directive or comment marker
(``.. `` at a line start), an inline literal marker (two backquotes) or a substitution or
link-target reference (``|x|``, ``x`_``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl
import yaml

from benchmarks._common import ROOT

RUN = """
import json, sys
from ragcourt.core import offline
offline.apply()
from ragcourt.corpus.params import ChunkSpec, CorpusParams
from ragcourt.corpus.chunking import chunk_documents
from ragcourt.corpus.ingest import ingest
corpus, out, specs = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
docs, rejected = ingest(CorpusParams(dir=corpus))
docs.write_parquet(f"{out}/documents.parquet")
for name, (size, overlap) in specs.items():
    spec = ChunkSpec(size=size, overlap=overlap)
    chunk_documents(docs, name, spec, "cl100k_base").write_parquet(f"{out}/chunks_{name}.parquet")
print(docs.height, rejected.height)
"""

PATTERNS = {
    "role syntax :[a-z]+:": re.compile(r":[a-z]+:"),
    "role call :name:`x`": re.compile(r":[\w.+-]+:`"),
    "directive or comment marker": re.compile(r"(?m)^\s*\.\. "),
    "inline literal ``": re.compile(r"``"),
    "substitution or link reference": re.compile(r"\|\w[\w -]*\||`_\b|`__"),
}


QAGEN = """
import json, sys
from ragcourt.core import offline
offline.apply()
import polars as pl
from ragcourt.orchestration.params import load_params
from ragcourt.corpus import chunking, ingest
from ragcourt.qagen import stage
p = load_params("params.yaml")
ingest.run(p)
chunking.run(p, p.qagen.reference_chunking)
stage.run(p)
"""


def _specs() -> dict[str, tuple[int, int]]:
    params = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    return {k: (v["size"], v["overlap"]) for k, v in params["chunkings"].items()}


def ingest_and_chunk(corpus: Path, out: Path, base: str | None) -> None:
    """Ingest and chunk ``corpus`` into ``out`` with this checkout (``base`` None) or the
    ``ragcourt`` package of commit ``base``."""
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    if base is not None:
        code = out / "code"
        archive = subprocess.run(
            ["git", "archive", base, "ragcourt"], cwd=ROOT, check=True, capture_output=True
        ).stdout
        code.mkdir(exist_ok=True)
        with tarfile.open(fileobj=__import__("io").BytesIO(archive)) as tar:
            tar.extractall(code, filter="data")
        env["PYTHONPATH"] = str(code)
    else:
        env["PYTHONPATH"] = str(ROOT)
    subprocess.run(
        [sys.executable, "-c", RUN, str(corpus), str(out), json.dumps(_specs())],
        check=True, env=env, cwd=out,
    )  # fmt: skip


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def identity(corpus: Path, base: str) -> dict[str, Any]:
    """Chunk tables of ``corpus`` by ``base`` and by this checkout: same columns, same bytes."""
    with tempfile.TemporaryDirectory(prefix="markup-identity-") as tmp:
        before, after = Path(tmp) / "before", Path(tmp) / "after"
        ingest_and_chunk(corpus, before, base)
        ingest_and_chunk(corpus, after, None)
        result: dict[str, Any] = {"base": base, "corpus": str(corpus), "tables": {}}
        for name in ["documents", *(f"chunks_{c}" for c in _specs())]:
            old = pl.read_parquet(before / f"{name}.parquet")
            new = pl.read_parquet(after / f"{name}.parquet")
            same_cols = new.select(old.columns)
            same_cols.write_parquet(Path(tmp) / "new_cols.parquet")
            old.write_parquet(Path(tmp) / "old_cols.parquet")
            result["tables"][name] = {
                "rows": [old.height, new.height],
                "base_columns_equal": old.equals(same_cols),
                "base_columns_sha256_equal": _sha(Path(tmp) / "old_cols.parquet")
                == _sha(Path(tmp) / "new_cols.parquet"),
                "new_columns": [c for c in new.columns if c not in old.columns],
                "new_columns_all_null": {
                    c: new[c].null_count() == new.height
                    for c in new.columns
                    if c not in old.columns
                },
            }
        return result


def leakage_counts(chunks: pl.DataFrame) -> dict[str, int]:
    texts = chunks["text"].to_list()
    out = {"chunks": len(texts)}
    for name, pat in PATTERNS.items():
        out[name] = sum(1 for t in texts if pat.search(t))
    out["any of these"] = sum(1 for t in texts if any(p.search(t) for p in PATTERNS.values()))
    return out


def leakage(corpus: Path, base: str, chunking: str) -> dict[str, Any]:
    """Chunks of ``chunking`` holding each kind of markup, by ``base`` and this checkout."""
    with tempfile.TemporaryDirectory(prefix="markup-leakage-") as tmp:
        result: dict[str, Any] = {"base": base, "corpus": str(corpus), "chunking": chunking}
        for label, ref in (("before", base), ("after", None)):
            out = Path(tmp) / label
            ingest_and_chunk(corpus, out, ref)
            docs = pl.read_parquet(out / "documents.parquet")
            chunks = pl.read_parquet(out / f"chunks_{chunking}.parquet")
            result[label] = {
                "documents": docs.height,
                "titles": sorted(docs["title"].to_list()),
                **leakage_counts(chunks),
            }
            if "section" in chunks.columns:
                result[label]["chunks with a section"] = int(chunks["section"].is_not_null().sum())
                result[label]["round trip"] = round_trip(corpus, docs, chunks)
        return result


def round_trip(corpus: Path, docs: pl.DataFrame, chunks: pl.DataFrame) -> dict[str, Any]:
    """Chunks whose round trip fails (ragcourt.corpus.markup_map.roundtrip_misses, read
    against the files), and the share of the text in copied segments."""
    from ragcourt.corpus.markup_map import (
        COPIED,
        SourceMap,
        roundtrip_misses,
        segments_of,
        source_text,
    )

    failed, copied, total = [], 0, 0
    for doc in docs.iter_rows(named=True):
        source = source_text((corpus / doc["path"]).read_text(encoding="utf-8-sig"))
        segments = segments_of(doc["source_map"]) or ()
        copied += sum(s.text_end - s.text_start for s in segments if s.kind == COPIED)
        total += len(doc["text"])
        smap = SourceMap.of(segments)
        for c in chunks.filter(pl.col("doc_id") == doc["doc_id"]).iter_rows(named=True):
            misses = roundtrip_misses(doc["text"], source, smap, c["char_start"], c["char_end"])
            if misses:
                failed.append({"chunk_id": c["chunk_id"], "misses": misses[:5]})
    return {
        "chunks failing": len(failed),
        "failures": failed[:10],
        "share of text in copied segments": round(copied / max(total, 1), 4),
    }


def qagen_run(
    corpus: Path,
    ref: str,
    attempts: int,
    overrides: dict[str, Any] | None = None,
    cache: Path | None = None,
) -> dict[str, Any]:
    """The qagen stage on ``corpus`` (module docstring) with the code, params.yaml and
    configs of commit ``ref`` (so neither side sees uncommitted work), ``overrides`` set
    under ``qagen.answer_first``; ``cache``: a reply cache to reuse (default: a new one)."""
    work = Path(tempfile.mkdtemp(prefix="markup-qagen-"))
    archive = subprocess.run(
        ["git", "archive", ref, "ragcourt", "params.yaml", "configs"],
        cwd=ROOT, check=True, capture_output=True,
    ).stdout  # fmt: skip
    with tarfile.open(fileobj=__import__("io").BytesIO(archive)) as tar:
        tar.extractall(work, filter="data")
    params = yaml.safe_load((work / "params.yaml").read_text(encoding="utf-8"))
    params["corpus"]["dir"] = str(corpus)
    params["qagen"]["max_attempts"] = attempts
    params["qagen"]["n_items"] = attempts
    params["llm"]["cache_dir"] = str(cache or work / ".cache")
    params["qagen"]["answer_first"].update(overrides or {})
    (work / "params.yaml").write_text(yaml.safe_dump(params), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(work)}
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", QAGEN], check=True, env=env, cwd=work)
    wall = time.perf_counter() - t0
    summary = json.loads((work / "data/qa/summary.json").read_text(encoding="utf-8"))
    qa = pl.read_parquet(work / "data/qa/qa.parquet")
    docs = pl.read_parquet(work / "data/documents.parquet")
    titles = dict(zip(docs["doc_id"].to_list(), docs["title"].to_list(), strict=True))
    chunks = pl.read_parquet(work / f"data/chunks/{params['qagen']['reference_chunking']}.parquet")
    sections = (
        dict(zip(chunks["chunk_id"].to_list(), chunks["section"].to_list(), strict=True))
        if "section" in chunks.columns
        else {}
    )
    items = [
        {
            "question_id": r["question_id"],
            "question": r["question"],
            "answer": (r["reference_answers"] or [""])[0],
            "title": titles.get(r["doc_id"]),
            "section": sections.get(r["source_chunk_id"]),
            "chunk": r["context"],
        }
        for r in qa.iter_rows(named=True)
    ]
    return {
        "commit": ref,
        "answer_first_overrides": overrides or {},
        "attempts": summary["attempts"],
        "accepted": summary["accepted"],
        "rejections": summary.get("rejections"),
        "wall_s": round(wall, 1),
        "items": items,
    }


def sheet(result: dict[str, Any], out: Path, key: Path) -> None:
    """The blind labelling sheet and its key (module docstring)."""
    import random

    items = [(run, it) for run in ("before", "after") for it in result[run]["items"]]
    random.Random(0).shuffle(items)
    lines = ["# Accepted questions to label (blind: run, title and filter scores hidden)", ""]
    mapping = {}
    for i, (run, it) in enumerate(items, start=1):
        lid = f"L{i:02d}"
        mapping[lid] = {"run": run, "question_id": it["question_id"]}
        lines += [f"## {lid}", "", f"- question: {it['question']}", f"- answer: {it['answer']}",
                  "- chunk:", "", "```text", it["chunk"], "```", ""]  # fmt: skip
    out.write_text("\n".join(lines), encoding="utf-8")
    key.write_text(json.dumps(mapping, indent=2) + "\n", encoding="utf-8")


def score(labels: dict[str, str], key: dict[str, dict[str, str]]) -> dict[str, Any]:
    """Items labelled good per run (a label is "good" or "bad: <why>")."""
    out: dict[str, Any] = {}
    for run in ("before", "after"):
        ids = [i for i, k in key.items() if k["run"] == run]
        good = sum(1 for i in ids if labels[i] == "good")
        out[run] = {"labelled": len(ids), "good": good,
                    "bad": {i: labels[i] for i in ids if labels[i] != "good"}}  # fmt: skip
    return out


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=["identity", "leakage", "qagen", "sheet", "score"])
    ap.add_argument("--out", default=None, help="sheet: the Markdown sheet")
    ap.add_argument("--key", default=None, help="sheet, score: the id -> run key")
    ap.add_argument("--labels", default=None, help="score: the hand labels")
    ap.add_argument("--base", default=None, help="the commit to compare with")
    ap.add_argument("--corpus", default=str(ROOT / "data/corpus"))
    ap.add_argument("--chunking", default="c512")
    ap.add_argument("--attempts", type=int, default=16, help="qagen: candidates per run")
    ap.add_argument("--after", default="HEAD", help="qagen: the commit after the change")
    ap.add_argument("--writer-tries", type=int, default=3, help="qagen.answer_first.writer_tries")
    ap.add_argument("--round-trip", default="llm", help="qagen.answer_first.round_trip")
    ap.add_argument("--json", default=None, help="also write the result here")
    args = ap.parse_args(argv)
    corpus = Path(args.corpus).resolve()
    if args.what == "sheet":
        sheet(
            json.loads(Path(args.json).read_text(encoding="utf-8")), Path(args.out), Path(args.key)
        )
        return
    if args.what == "score":
        labels = json.loads(Path(args.labels).read_text(encoding="utf-8"))
        key = json.loads(Path(args.key).read_text(encoding="utf-8"))
        print(json.dumps(score(labels, key), indent=2, ensure_ascii=False))
        return
    if args.base is None:
        ap.error("--base is required")
    if args.what == "identity":
        result = identity(corpus, args.base)
    elif args.what == "qagen":
        overrides = {"writer_tries": args.writer_tries, "round_trip": args.round_trip}
        result = {
            "corpus": str(corpus),
            "before": qagen_run(corpus, args.base, args.attempts, overrides),
            "after": qagen_run(corpus, args.after, args.attempts, overrides),
        }
    else:
        result = leakage(corpus, args.base, args.chunking)
    text = json.dumps(result, indent=2, ensure_ascii=False)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
