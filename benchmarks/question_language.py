"""Are generated questions in the language of their chunk? (target >= 95%)

Builds a throw-away project on ``--corpus`` (default: the test corpora in
``tests/data/multilingual/{zh,de}``, text written for the tests), runs the real ingest, chunk
and qagen stages with an empty reply cache, then detects (langdetect, seeded:
:func:`ragcourt.corpus.language.detect_language`) the language of every question the writer
produced, accepted or rejected later, and compares it with the language of its source chunk.

Two shares are printed: over every written question (the writer's own behaviour, before the
``question_language`` gate rule can reject a mismatch), and over the accepted items. The filter
judges run on ``--filter-model`` (default: the embedded 135M) because only the writer is
measured here; ``--model`` writes questions and reference answers.

    python -m benchmarks question_language \
        --model local/qwen2.5-coder-1.5b --max-attempts 24 --out /tmp/qlang.json
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from benchmarks._common import ROOT, project_copy, working_dir, write_params

DEFAULT_CORPORA = ("tests/data/multilingual/zh", "tests/data/multilingual/de")


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--model", default="local/qwen2.5-coder-1.5b", help="question + answer writer")
    ap.add_argument("--filter-model", default="local/smollm2-135m")
    ap.add_argument("--corpus", action="append", default=None, help="folder (repeatable)")
    ap.add_argument("--n-items", type=int, default=24)
    ap.add_argument("--max-attempts", type=int, default=24)
    ap.add_argument("--chunk-size", type=int, default=256)
    ap.add_argument("--prompt-version", default=None, help="writer prompts (default: params)")
    ap.add_argument("--out", type=Path, default=None, help="JSON with one row per question")
    ap.add_argument("--cache", type=Path, default=None, help="reply cache (default: empty)")
    args = ap.parse_args(argv)

    folders = [Path(c) for c in (args.corpus or [str(ROOT / c) for c in DEFAULT_CORPORA])]
    files = [p for f in folders for p in sorted(f.glob("*.txt"))]
    if not files:
        raise SystemExit(f"bench_question_language: no .txt files in {folders}")
    work, params = project_copy("bench_qlang_")
    (work / "data/corpus").mkdir(parents=True)
    for p in files:
        shutil.copy(p, work / "data/corpus" / f"{p.parent.name}_{p.name}")
    params["chunkings"] = {"bench": {"size": args.chunk_size, "overlap": args.chunk_size // 8}}
    params["qagen"].update(
        reference_chunking="bench",
        n_items=args.n_items,
        max_attempts=args.max_attempts,
        qa_file=None,
        question_model=args.model,
        answer_model=args.model,
        filter_model=args.filter_model,
        min_context_tokens=20,
    )
    if args.prompt_version:
        params["qagen"]["prompt_version"] = args.prompt_version
    cache = args.cache.resolve() if args.cache else work / ".cache"  # empty: all calls real
    params["llm"]["cache_dir"] = str(cache)
    write_params(work, params)

    try:
        with working_dir(work):
            from ragcourt.core import catalog, offline
            from ragcourt.core.io import read_table
            from ragcourt.corpus import chunking as chunk
            from ragcourt.corpus import ingest
            from ragcourt.corpus.language import detect_language
            from ragcourt.orchestration.params import load_params
            from ragcourt.qagen import stage as qagen

            offline.apply()
            run_params = load_params("params.yaml")
            ingest.run(run_params)
            chunk.run(run_params, chunking="bench")
            t0 = time.perf_counter()
            qagen.run(run_params)
            seconds = time.perf_counter() - t0
            qa = read_table(catalog.path("qa"), "qa").with_columns(accepted=True)
            rej = read_table(catalog.path("qa_rejected"), "qa_rejected").with_columns(
                accepted=False
            )
            summary = json.loads(catalog.path("qa_summary").read_text())
            cols = ["question", "context", "accepted", "doc_id"]
            rows = [
                r
                for frame in (qa, rej)
                for r in frame.select(cols).iter_rows(named=True)
                if r["question"]
            ]
    finally:
        shutil.rmtree(work, ignore_errors=True)

    out = []
    for r in rows:
        q, c = detect_language(r["question"]), detect_language(r["context"])
        out.append(
            {"question": r["question"], "question_language": q.language,
             "chunk_language": c.language, "same": q.language == c.language,
             "accepted": r["accepted"], "chunk": r["context"][:200]}
        )  # fmt: skip
    written = len(out)
    same = sum(r["same"] for r in out)
    acc = [r for r in out if r["accepted"]]
    by_lang = Counter((r["chunk_language"], r["question_language"]) for r in out)
    print(f"corpus: {len(files)} files from {[str(f) for f in folders]}")
    print(f"writer: {args.model}; filters: {args.filter_model}; qagen {seconds:.0f} s, "
          f"{summary['attempts']} attempts, {summary['accepted']} accepted")  # fmt: skip
    print(f"written questions in their chunk's language: {same}/{written}"
          f" = {same / max(written, 1):.3f}")  # fmt: skip
    print(f"accepted questions in their chunk's language: {sum(r['same'] for r in acc)}/"
          f"{len(acc)}")  # fmt: skip
    print("(chunk language, question language): count")
    for (cl, ql), n in sorted(by_lang.items()):
        print(f"  ({cl}, {ql}): {n}")
    for r in out:
        if not r["same"]:
            print(f"  mismatch [{r['chunk_language']} -> {r['question_language']}]: "
                  f"{r['question'][:100]!r}")  # fmt: skip
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"model": args.model, "rows": out}, ensure_ascii=False,
                                       indent=1))  # fmt: skip
