"""``judge_retrieval`` wall time before and after probability grading and prefix reuse.

Runs :func:`ragcourt.judging.retrieval_stage.judge_retrieval` (RAGElo passage relevance +
UDCG passage utility) on the answers and QA set of a finished demo run (``data/answers``,
``data/qa``; run ``dvc repro`` first) with the same model under several settings, side by side in
one process, each with its own empty reply cache so every call reaches the model:

- ``before``: judge prompts v1 (relevance as a generated JSON with a reason), prefix reuse off
  (the pipeline before probability grading and prefix reuse);
- ``v1+reuse``: the same prompts with prefix reuse: the form did not change, so every
  relevance grade and P(NO-RESPONSE) must be identical to ``before``;
- ``v2-no-reuse`` / ``v2``: prompts v2 (one-token probability form), reuse off / on (the
  default of the previous stop); identical outputs;
- ``v4-no-reuse`` / ``v4``: prompts v4 (relevance and UDCG share the system prompt and the
  question-and-passage head, both judges in one batch, so the UDCG call reuses the passage's
  KV state), reuse off / on; identical outputs. v4 changes the prompt words, so its outputs
  are compared with v2's by Spearman correlation, not equality;
- ``v5-no-reuse`` / ``v5``: prompts v5 (the two task descriptions in the shared system
  prompt, the reminder in the shared head, a one-line task name after it), reuse off / on;
  identical outputs; compared with v4 by Spearman.

Prints wall time, model calls, prompt tokens evaluated, the speed-up ``before / after`` and
whether the outputs that must match do.

    python -m benchmarks judge_retrieval --model local/smollm2-135m
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scipy.stats import spearmanr

from ragcourt.core import offline
from ragcourt.judging.retrieval_stage import judge_retrieval
from ragcourt.judging.stage_inputs import read_answers_and_qa
from ragcourt.judging.vocabulary import JudgeContext
from ragcourt.llm.accounting import fresh_accounts
from ragcourt.orchestration.params import Params, load_params

SETTINGS: dict[str, tuple[str, bool]] = {  # name: (judge prompt version, prefix reuse)
    "before": ("v1", False),
    "v1+reuse": ("v1", True),
    "v2-no-reuse": ("v2", False),
    "v2": ("v2", True),
    "v4-no-reuse": ("v4", False),
    "v4": ("v4", True),
    "v5-no-reuse": ("v5", False),
    "v5": ("v5", True),
}
SAME_FORM = (
    ("before", "v1+reuse"),
    ("v2-no-reuse", "v2"),
    ("v4-no-reuse", "v4"),
    ("v5-no-reuse", "v5"),
)
COMPARED = (("v2", "v4"), ("v4", "v5"))  # different words: outputs compared by Spearman


def one(
    params: Params, version: str, reuse: bool, cache: Path, questions: int | None
) -> dict[str, Any]:
    p = params.model_copy(deep=True)
    p.judge.prompt_version = version
    p.judge.reason = False
    p.llm.prefix_reuse = reuse
    p.llm.cache_dir = str(cache)
    answers, qa = read_answers_and_qa()
    if questions:
        qa = qa.head(questions)
        answers = answers.join(qa.select("question_id"), on="question_id", how="semi")
    with fresh_accounts() as accounts:
        ctx = JudgeContext(p, stage="bench_judge_retrieval")
        t0 = time.perf_counter()
        relevance, utility, _ = judge_retrieval(answers, qa, ctx)
        wall = time.perf_counter() - t0
        acc = accounts["bench_judge_retrieval"].as_dict()["total"]
    return {
        "wall_s": wall,
        "calls": acc["model_calls"],
        "prompt_tokens": acc["prompt_tokens"],
        "evaluated_tokens": acc["evaluated_tokens"],
        "relevance": relevance.sort("question_id", "chunk_id")["relevance_expected"].to_list(),
        "p_no_response": utility.sort("question_id", "chunk_id")["p_no_response"].to_list(),
    }


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--model", default=None, help="judge model (default: params llm.model)")
    ap.add_argument(
        "--settings", default=",".join(SETTINGS), help=f"comma list of {list(SETTINGS)}"
    )
    ap.add_argument("--questions", type=int, default=None, help="first n questions only")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    names = [n for n in args.settings.split(",") if n]
    unknown = [n for n in names if n not in SETTINGS]
    if unknown:
        ap.error(f"unknown settings {unknown}; known: {list(SETTINGS)}")
    offline.apply()
    params = load_params("params.yaml")
    if args.model:
        params.llm.model = args.model
        params.judge.relevance_model = None
        params.judge.udcg.model = None
    res: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="bench_jr_") as tmp:
        for name in names:
            v, reuse = SETTINGS[name]
            res[name] = one(params, v, reuse, Path(tmp) / name, args.questions)
            r = res[name]
            print(f"{name:12s} prompts {v}, reuse {reuse!s:5s}: {r['wall_s']:7.1f} s, "
                  f"{r['calls']} calls, {r['prompt_tokens']} prompt tokens, "
                  f"{r['evaluated_tokens']} evaluated", flush=True)  # fmt: skip
    if "before" in res:
        b = res["before"]["wall_s"]
        for name in names[1:] if names[0] == "before" else names:
            if name != "before":
                print(f"speed-up before/{name}: {b / res[name]['wall_s']:.2f}x")
    for x, y in SAME_FORM:
        if x in res and y in res:
            same = all(res[x][k] == res[y][k] for k in ("relevance", "p_no_response"))
            print(f"outputs {x} == {y}: {same}")
    for x, y in COMPARED:
        if x not in res or y not in res:
            continue
        for k in ("relevance", "p_no_response"):
            pairs = [
                (a, b)
                for a, b in zip(res[x][k], res[y][k], strict=True)
                if a is not None and b is not None
            ]
            rho = spearmanr([a for a, _ in pairs], [b for _, b in pairs]).statistic
            print(f"{x} vs {y} {k}: Spearman {rho:.3f} over {len(pairs)} passages")
    if args.out:
        args.out.write_text(json.dumps(res, indent=1))
