"""Calibrate the answerability judge (stages.qa_filters) against SQuAD 2.0 human labels.

Runs ``judge_answerability`` on ``{question, context, answerability}`` items (default
``../shared/validation/squadv2_train.json``, 500 items) and prints, per model: accuracy,
macro-F1, Cohen's kappa (scikit-learn), Spearman rho with SE = sqrt((1 + rho^2/2)/(n - 3))
(scipy; RAGalyst / Bonett-Wright), over the items the judge answered; judge failures are
counted and also scored as a wrong answer in the ``fail=wrong`` row. RAGalyst reports rho =
0.752 (Gemini 2.5 Pro) and 0.632 (GPT-4o-mini, 2-shot) for its own prompt.

    python benchmarks/calibrate_answerability.py --limit 100
    python benchmarks/calibrate_answerability.py --model openai/gpt-4o-mini
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import spearmanr
from sklearn.metrics import accuracy_score, cohen_kappa_score, confusion_matrix, f1_score

from stages.params import load_params
from stages.qa_filters import JudgeSettings, judge_answerability

DEFAULT_DATA = Path("../shared/validation/squadv2_train.json")


def agreement(human: np.ndarray, judge: np.ndarray) -> dict[str, Any]:
    """Accuracy, macro-F1, Cohen's kappa, Spearman rho and its SE for two 0/1 label vectors."""
    n = len(human)
    out: dict[str, Any] = {"n": n}
    if n == 0:
        return out
    out["accuracy"] = float(accuracy_score(human, judge))
    out["macro_f1"] = float(f1_score(human, judge, average="macro", labels=[0, 1]))
    constant = len(np.unique(judge)) < 2 or len(np.unique(human)) < 2
    out["kappa"] = float(cohen_kappa_score(human, judge)) if not constant else 0.0
    if constant or n <= 3:
        out["spearman"] = float("nan")
        out["spearman_se"] = float("nan")
    else:
        rho = float(spearmanr(human, judge).statistic)
        out["spearman"] = rho
        out["spearman_se"] = math.sqrt((1 + rho**2 / 2) / (n - 3))
    out["judge_positive_rate"] = float(np.mean(judge))
    out["confusion[h][j]"] = confusion_matrix(human, judge, labels=[0, 1]).tolist()
    return out


def calibrate(items: list[dict[str, Any]], model: str, params_path: str, version: str) -> dict:
    from stages.llm import Gateway

    params = load_params(params_path)
    gw = Gateway(params.llm, stage="calibration")
    cfg = JudgeSettings(
        model=model,
        prompt_version=version,
        temperature=0.0,
        seed=params.llm.seed,
        max_tokens=params.qagen.judge_max_tokens,
    )
    t0 = time.perf_counter()
    outcomes = judge_answerability(
        gw, [i["question"] for i in items], [i["context"] for i in items], cfg, "calibration"
    )
    seconds = time.perf_counter() - t0
    human = np.array([round(i["answerability"]) for i in items])
    ok = np.array([o.ok for o in outcomes])
    judged = np.array([int(o.score) if o.ok and o.score is not None else -1 for o in outcomes])
    answered = agreement(human[ok], judged[ok])
    # failures scored as the wrong label, so a judge cannot look better by failing
    as_wrong = np.where(ok, judged, 1 - human)
    return {
        "model": model,
        "items": len(items),
        "failures": int((~ok).sum()),
        "seconds": round(seconds, 1),
        "answered": answered,
        "fail=wrong": agreement(human, as_wrong),
        "first_errors": sorted({o.error or "" for o in outcomes if not o.ok})[:3],
    }


def _fmt(row: dict[str, Any]) -> str:
    def f(key: str) -> str:
        v = row.get(key)
        return "   -  " if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:6.3f}"

    return (
        f"n={row.get('n', 0):4d} acc={f('accuracy')} macroF1={f('macro_f1')} "
        f"kappa={f('kappa')} spearman={f('spearman')} (SE {f('spearman_se')}) "
        f"judge=1 rate={f('judge_positive_rate')}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument("--model", action="append", help="litellm model string (repeatable)")
    ap.add_argument("--limit", type=int, default=None, help="first N items only")
    ap.add_argument("--params", default="params.yaml")
    ap.add_argument("--prompt-version", default=None, help="default: qagen.prompt_version")
    ap.add_argument("--json", default=None, help="also write the results to this file")
    args = ap.parse_args()

    data = Path(args.data)
    if not data.is_file():
        sys.exit(f"calibrate_answerability: {data} not found (expects ../shared/validation)")
    items = json.loads(data.read_text(encoding="utf-8"))[: args.limit]
    params = load_params(args.params)
    models = args.model or [params.llm.resolve(params.qagen.filter_model)]
    version = args.prompt_version or params.qagen.prompt_version
    labels = [round(i["answerability"]) for i in items]
    print(f"{data}: {len(items)} items, {sum(labels)} answerable; prompt qagen/{version}")
    results = []
    for model in models:
        res = calibrate(items, model, args.params, version)
        results.append(res)
        print(f"\n{model}: {res['failures']} judge failures, {res['seconds']} s")
        print(f"  answered   : {_fmt(res['answered'])}")
        print(f"  fail=wrong : {_fmt(res['fail=wrong'])}")
        print(f"  confusion [human][judge] (answered): {res['answered'].get('confusion[h][j]')}")
        for err in res["first_errors"]:
            print(f"  e.g. failure: {err[:160]}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
