"""Calibrate the answerability judge (ragcourt.qagen.filters) against SQuAD 2.0 human labels.

Runs ``judge_answerability`` on ``{question, context, answerability}`` items (default
``../shared/validation/squadv2_train.json``, 500 items) and prints, per model: accuracy,
macro-F1, Cohen's kappa, Spearman rho with SE = sqrt((1 + rho^2/2)/(n - 3)) and Kendall
tau-b (``ragcourt.judging.agreement``: scikit-learn / scipy; RAGalyst / Bonett-Wright), over
the items the judge answered; judge failures are counted and also scored as a wrong answer
in the ``fail=wrong`` row. A statistic that is undefined (e.g. kappa or rho when both label
vectors are constant) prints as ``undef``, never as 0. RAGalyst reports rho = 0.752
(Gemini 2.5 Pro) and 0.632 (GPT-4o-mini, 2-shot) for its own prompt.

Models: always the embedded local model (``LLMParams`` default) first, then the params'
``qagen.filter_model`` when it differs, then every ``--model`` (``--only``: just ``--model``).

Forms (``--form``, repeatable; default both): ``probability`` scores P(yes) (prompt v2, one
forward pass): kappa at the params' ``qagen.thresholds.answerability``, then a threshold fitted
by stratified 5-fold CV (``ragcourt.calibration.threshold.cv_threshold``: each fold's
threshold maximises kappa on the other four; reported: pooled held-out kappa / macro-F1 and
the threshold fitted on all items). ``generated`` asks for a reason and a yes/no label
(``filter_reason``), scored 1/0. Time per item is wall time / items (no reply cache).

    python -m benchmarks calibrate_answerability --limit 100
    python -m benchmarks calibrate_answerability --model openai/gpt-4o-mini
    python -m benchmarks calibrate_answerability --data /work/shared/validation/squadv2_train.json \
        --limit 200 --only --model local/qwen2.5-coder-0.5b --form probability
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.metrics import confusion_matrix

from benchmarks._common import VALIDATION
from ragcourt.calibration.threshold import cv_threshold
from ragcourt.judging.agreement import binary_agreement, rank_correlation
from ragcourt.llm.params import LLMParams
from ragcourt.orchestration.params import Params, load_params
from ragcourt.qagen.filter_registry import JudgeSettings
from ragcourt.qagen.filters import judge_answerability

DEFAULT_DATA = VALIDATION / "squadv2_train.json"
EMBEDDED_MODEL: str = LLMParams.model_fields["model"].default


def models_to_run(params: Params, extra: list[str] | None, only: bool = False) -> list[str]:
    """The embedded local model first, then the configured filter model, then ``extra``
    (each once, in that order); ``only``: just ``extra``."""
    if only:
        return list(dict.fromkeys(extra or []))
    configured = params.llm.resolve(params.qagen.filter_model)
    return list(dict.fromkeys([EMBEDDED_MODEL, configured, *(extra or [])]))


def agreement(human: np.ndarray, judge: np.ndarray) -> dict[str, Any]:
    """Accuracy, macro-F1, Cohen's kappa (``binary_agreement``), Spearman rho with its SE
    and Kendall tau-b (``rank_correlation``) of two 0/1 label vectors; undefined -> None."""
    out: dict[str, Any] = binary_agreement(human.tolist(), judge.tolist())
    if out["n"] == 0:
        return out
    rank = rank_correlation(human.astype(float).tolist(), judge.astype(float).tolist())
    out |= {k: rank[k] for k in ("spearman", "spearman_se", "kendall_tau_b")}
    out["judge_positive_rate"] = float(np.mean(judge))
    out["confusion[h][j]"] = confusion_matrix(human, judge, labels=[0, 1]).tolist()
    return out


def calibrate(
    items: list[dict[str, Any]], model: str, params_path: str, version: str, form: str
) -> dict[str, Any]:
    from ragcourt.llm import Gateway

    params = load_params(params_path)
    # no reply cache: the time per item is the model's, not a cache read
    gw = Gateway(params.llm.model_copy(update={"cache": False}), stage="calibration")
    cfg = JudgeSettings(
        model=model,
        prompt_version=version,
        temperature=0.0,
        seed=params.llm.seed,
        max_tokens=params.qagen.judge_max_tokens,
        reason=form == "generated",
    )
    threshold = params.qagen.thresholds.answerability
    t0, c0 = time.perf_counter(), time.process_time()
    outcomes = judge_answerability(
        gw, [i["question"] for i in items], [i["context"] for i in items], cfg, "calibration"
    )
    seconds = time.perf_counter() - t0
    cpu = time.process_time() - c0  # all threads of this process: less load-sensitive
    human = np.array([round(i["answerability"]) for i in items])
    ok = np.array([o.ok for o in outcomes])
    scores = np.array([o.score if o.ok and o.score is not None else np.nan for o in outcomes])
    judged = np.where(ok, (np.nan_to_num(scores) >= threshold).astype(int), -1)
    answered = agreement(human[ok], judged[ok])
    forms = sorted({o.form or "" for o in outcomes if o.ok})
    cv = (
        cv_threshold(scores[ok].tolist(), human[ok].tolist()).model_dump()
        if form == "probability" and ok.sum() >= 10
        else None
    )
    # failures scored as the wrong label, so a judge cannot look better by failing
    as_wrong = np.where(ok, judged, 1 - human)
    return {
        "model": model,
        "form": form,
        "forms_seen": forms,
        "threshold": threshold,
        "cv": cv,
        "items": len(items),
        "s_per_item": round(seconds / max(len(items), 1), 3),
        "cpu_s_per_item": round(cpu / max(len(items), 1), 3),
        "failures": int((~ok).sum()),
        "seconds": round(seconds, 1),
        "answered": answered,
        "fail=wrong": agreement(human, as_wrong),
        "first_errors": sorted({o.error or "" for o in outcomes if not o.ok})[:3],
    }


def _fmt(row: dict[str, Any]) -> str:
    def f(key: str) -> str:
        v = row.get(key)
        return " undef" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:6.3f}"

    return (
        f"n={row.get('n', 0):4d} acc={f('accuracy')} macroF1={f('macro_f1')} "
        f"kappa={f('kappa')} spearman={f('spearman')} (SE {f('spearman_se')}) "
        f"judge=1 rate={f('judge_positive_rate')}"
    )


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument(
        "--model",
        action="append",
        help="litellm model string, run after the embedded model (repeatable)",
    )
    ap.add_argument("--only", action="store_true", help="run only the --model models")
    ap.add_argument(
        "--form", action="append", choices=["probability", "generated"], help="default: both"
    )
    ap.add_argument("--limit", type=int, default=None, help="first N items only")
    ap.add_argument("--params", default="params.yaml")
    ap.add_argument("--prompt-version", default=None, help="default: qagen.prompt_version")
    ap.add_argument("--json", default=None, help="also write the results to this file")
    args = ap.parse_args(argv)

    data = Path(args.data)
    if not data.is_file():
        sys.exit(f"calibrate_answerability: {data} not found (expects ../shared/validation)")
    items = json.loads(data.read_text(encoding="utf-8"))[: args.limit]
    params = load_params(args.params)
    models = models_to_run(params, args.model, args.only)
    version = args.prompt_version or params.qagen.filter_prompt_version
    labels = [round(i["answerability"]) for i in items]
    print(f"{data}: {len(items)} items, {sum(labels)} answerable; filter prompt {version}")
    results = []
    for model in models:
        for form in args.form or ["probability", "generated"]:
            res = calibrate(items, model, args.params, version, form)
            results.append(res)
            print(
                f"\n{model} [{form}; seen {res['forms_seen']}]: {res['failures']} judge failures,"
                f" {res['seconds']} s ({res['s_per_item']} s/item, cpu {res['cpu_s_per_item']}"
                f" s/item); threshold {res['threshold']}"
            )
            print(f"  answered   : {_fmt(res['answered'])}")
            print(f"  fail=wrong : {_fmt(res['fail=wrong'])}")
            print(
                f"  confusion [human][judge] (answered): {res['answered'].get('confusion[h][j]')}"
            )
            if res["cv"] is not None:
                cv = res["cv"]
                print(
                    f"  5-fold CV  : kappa={cv['cv_kappa']} macroF1={cv['cv_macro_f1']} "
                    f"fold thresholds {cv['fold_thresholds']}; fitted on all n={cv['n']}: "
                    f"threshold={cv['threshold']} (train kappa {cv['train_kappa']})"
                )
            for err in res["first_errors"]:
                print(f"  e.g. failure: {err[:160]}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2), encoding="utf-8")
