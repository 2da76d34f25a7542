"""Do the judge_retrieval prompt versions keep their judges' quality? (prompts v4)

Judge prompts v4 move the relevance and UDCG instructions after the passage so both judges
share the question-and-passage prefix (``python -m benchmarks judge_retrieval`` measures the
speed). This script checks, on human labels from a train split, that the wording change does
not cost discrimination: each SQuAD 2.0 train item ``{question, context, answerability}`` is one
(question, passage) pair; per prompt version it asks, in one grouped batch as the stage does,

- RAGElo relevance E[grade] over P("0"/"1"/"2"): a passage that answers the question is
  "very relevant" (2), so E[grade] should be higher for answerable items;
- UDCG's P(NO-RESPONSE): the reader should abstain on unanswerable items.

Reported per version: ROC AUC of E[grade] for answerable (1 = perfect, 0.5 = blind), ROC AUC
of 1 - P(NO-RESPONSE) for answerable, Spearman between the versions' scores, wall seconds,
prompt tokens and evaluated tokens (prefix reuse on). SQuAD 2.0's unanswerable questions are
written against the same paragraph, so relevance here asks "answers it", not "on topic".
No threshold is fitted; nothing is tuned.

    python -m benchmarks retrieval_prompts --model local/smollm2-135m \\
        --versions v2,v4 --limit 60
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl
from scipy.stats import spearmanr
from sklearn.metrics import roc_auc_score

from benchmarks._common import VALIDATION
from ragcourt.core import offline
from ragcourt.judging.relevance import GRADE_LEVELS, relevance_token_requests
from ragcourt.judging.udcg import NO_RESPONSE, passage_udcg_requests
from ragcourt.llm import Gateway
from ragcourt.llm.accounting import fresh_accounts
from ragcourt.llm.graded import expected_level
from ragcourt.orchestration.params import load_params

DEFAULT_DATA = VALIDATION / "squadv2_train.json"


def run_version(
    items: list[dict[str, Any]], model: str, version: str, cache: str | None
) -> dict[str, Any]:
    """E[grade], P(NO-RESPONSE), AUCs and cost of prompt ``version`` on ``items``."""
    params = load_params("params.yaml").model_copy(deep=True)
    params.llm.cache = cache is not None
    if cache:
        params.llm.cache_dir = cache
    params.llm.metrics_dir = "/tmp/ragcourt-bench-retrieval-prompts"
    passages = pl.DataFrame(
        {
            "question_id": [f"q{i}" for i in range(len(items))],
            "chunk_id": [f"c{i}" for i in range(len(items))],
            "text": [it["context"] for it in items],
        }
    )
    qa = pl.DataFrame(
        {"question_id": passages["question_id"], "question": [it["question"] for it in items]}
    )
    rel_reqs = relevance_token_requests(passages, qa, model, version)
    udcg_reqs = passage_udcg_requests(passages, qa, model, version)
    with fresh_accounts() as accounts:
        gw = Gateway(params.llm, stage="bench_retrieval_prompts")
        t0 = time.perf_counter()
        rel, udcg = gw.next_token_probs_grouped(
            [(rel_reqs, list(GRADE_LEVELS)), (udcg_reqs, [NO_RESPONSE])], desc=version
        )
        wall = time.perf_counter() - t0
        acc = accounts["bench_retrieval_prompts"].as_dict()["total"]
    grade = [expected_level(d.probs, GRADE_LEVELS) if d.ok else None for d in rel]
    p_no = [d.raw.get(NO_RESPONSE) if d.ok else None for d in udcg]
    y = [int(float(it["answerability"]) >= 0.5) for it in items]
    ok_g = [(g, t) for g, t in zip(grade, y, strict=True) if g is not None]
    ok_p = [(1.0 - p, t) for p, t in zip(p_no, y, strict=True) if p is not None]
    return {
        "version": version,
        "n": len(items),
        "answerable": sum(y),
        "failures": sum(g is None for g in grade) + sum(p is None for p in p_no),
        "auc_relevance": roc_auc_score([t for _, t in ok_g], [g for g, _ in ok_g]),
        "auc_udcg": roc_auc_score([t for _, t in ok_p], [s for s, _ in ok_p]),
        "wall_s": round(wall, 1),
        "prompt_tokens": acc["prompt_tokens"],
        "evaluated_tokens": acc["evaluated_tokens"],
        "grade": grade,
        "p_no_response": p_no,
    }


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--model", default="local/smollm2-135m")
    ap.add_argument("--versions", default="v2,v4", help="judge.yaml versions, comma list")
    ap.add_argument("--limit", type=int, default=60, help="first N train items")
    ap.add_argument("--cache", default=None, help="reply cache folder (default: no cache)")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    if not args.data.is_file():
        ap.error(f"{args.data}: not found (expects ../shared/validation/squadv2_train.json)")
    offline.apply()
    items = json.loads(args.data.read_text(encoding="utf-8"))[: args.limit]
    res = [run_version(items, args.model, v, args.cache) for v in args.versions.split(",")]
    print(f"{args.data.name}: first {len(items)} items, {res[0]['answerable']} answerable; "
          f"model {args.model}")  # fmt: skip
    print("version | AUC relevance E[grade] | AUC 1-P(NO-RESPONSE) | fail | wall s | "
          "prompt / evaluated tokens")  # fmt: skip
    for r in res:
        tokens = f"{r['prompt_tokens']} / {r['evaluated_tokens']}"
        print(f"{r['version']:7s} | {r['auc_relevance']:.3f} | {r['auc_udcg']:.3f} | "
              f"{r['failures']} | {r['wall_s']} | {tokens}")  # fmt: skip
    for a, b in itertools.pairwise(res):
        for k in ("grade", "p_no_response"):
            pairs = [
                (x, y) for x, y in zip(a[k], b[k], strict=True) if x is not None and y is not None
            ]
            rho = spearmanr([x for x, _ in pairs], [y for _, y in pairs]).statistic
            print(f"{a['version']} vs {b['version']} {k}: Spearman {rho:.3f} (n={len(pairs)})")
    if args.out:
        args.out.write_text(json.dumps({"model": args.model, "results": res}, indent=1))
