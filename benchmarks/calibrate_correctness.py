"""Calibrate the correctness judges and the DAFE ensemble against STS-B human similarity.

Each item of ``../shared/validation/sts_train.json`` ``{sentence1, sentence2, similarity}``
is judged as reference = sentence1, candidate answer = sentence2, no question (RAGalyst's
STS-B protocol). Reported per judge (every judge under ``judge.judges`` in params), for the
RAGalyst correctness rubric and for the DAFE ensemble (params' primaries + arbitrator):

* scores (token F1, cosine, rubric score): Spearman rho with SE = sqrt((1 + rho²/2)/(n − 3))
  and Kendall tau-b against the human similarity;
* binary verdicts against "equivalent" = similarity >= 0.7: accuracy, macro-F1, Cohen's
  kappa. The rubric's verdict is score >= 0.7 (its "aligns, minor errors" level).

Models for the LLM roles: always the embedded local model (``LLMParams`` default) first,
then the params' own role models when any differs from it, then every ``--model`` (each
run sets every LLM role to that model). ``--skip-llm`` runs once (no model calls).

Metrics are over the items a judge answered; failures are counted, and the ``fail=wrong``
row scores each failure as the wrong label so failing cannot look good. Nothing is tuned.
RAGalyst reports rho = 0.874 (GPT-4o-mini) for its rubric and 0.622 for cosine similarity.

``--form probability|generated`` (repeatable) measures only the expected-level grader
(``correctness_mode: expected``) in that form, probability = E[level] from P(digit) in one
forward pass, generated = a written reason and a digit (``judge.reason: true``), next to the
judges that make no model call (token F1, MiniLM cosine: the baseline) on the same items,
with no reply cache so the time per item is the model's. ``--only``: just the ``--model``s.

    python -m benchmarks calibrate_correctness --limit 12          # ~5 min on the tiny model
    python -m benchmarks calibrate_correctness --skip-llm          # non-LLM judges, all 500
    python -m benchmarks calibrate_correctness --model openai/gpt-4o-mini
    python -m benchmarks calibrate_correctness --data /work/shared/validation/sts_train.json \
        --limit 150 --only --model local/qwen2.5-coder-0.5b --form probability
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

from benchmarks._common import VALIDATION
from ragcourt.judging.agreement import binary_agreement, rank_correlation
from ragcourt.judging.builders import build_judge
from ragcourt.judging.correctness import grade_correctness, grade_correctness_expected
from ragcourt.judging.dafe import dafe_summary, run_dafe
from ragcourt.judging.vocabulary import AnswerItem, AnswerVerdict, JudgeContext
from ragcourt.llm.params import LLMParams
from ragcourt.orchestration.params import Params, load_params

DEFAULT_DATA = VALIDATION / "sts_train.json"
EMBEDDED_MODEL: str = LLMParams.model_fields["model"].default
EQUIVALENT = 0.7  # human similarity (0-5 scaled to 0-1) at or above which a pair is equivalent


def models_to_run(params: Params, extra: list[str] | None, only: bool = False) -> list[str | None]:
    """LLM-role models, one calibration run each: the embedded model, then ``None`` (the
    params' role models as configured) when any LLM role uses another model, then
    ``extra``; each once, in that order (``only``: just ``extra``)."""
    if only:
        return list(dict.fromkeys(extra or []))
    jp, llm = params.judge, params.llm
    roles = {llm.resolve(s.model) for s in jp.judges.values() if s.kind == "llm"}
    roles.add(llm.resolve(jp.correctness_model))
    configured: list[str | None] = [None] if roles - {EMBEDDED_MODEL} else []
    return list(dict.fromkeys([EMBEDDED_MODEL, *configured, *(extra or [])]))


def _binary(human: list[float], verdicts: list[bool | None]) -> dict[str, Any]:
    truth = [h >= EQUIVALENT for h in human]
    answered = [(t, v) for t, v in zip(truth, verdicts, strict=True) if v is not None]
    as_wrong = [v if v is not None else not t for t, v in zip(truth, verdicts, strict=True)]
    return {
        "answered": binary_agreement([t for t, _ in answered], [v for _, v in answered]),
        "fail=wrong": binary_agreement(truth, as_wrong),
        "positive_rate": (sum(v for _, v in answered) / len(answered)) if answered else None,
    }


def _scores(human: list[float], scores: list[float | None]) -> dict[str, Any]:
    return rank_correlation(human, [math.nan if s is None else s for s in scores])


def evaluate_judge(
    name: str, verdicts: list[AnswerVerdict], human: list[float], seconds: float
) -> dict[str, Any]:
    has_score = any(v.score is not None for v in verdicts)
    return {
        "judge": name,
        "failures": sum(not v.ok for v in verdicts),
        "seconds": round(seconds, 1),
        "binary": _binary(human, [v.verdict if v.ok else None for v in verdicts]),
        "scores": _scores(human, [v.score if v.ok else None for v in verdicts])
        if has_score
        else None,
        "first_errors": sorted({v.error or "" for v in verdicts if not v.ok})[:3],
    }


def calibrate(
    items: list[dict[str, Any]],
    params: Params,
    model: str | None,
    skip_llm: bool = False,
    forms: list[str] | None = None,
) -> dict[str, Any]:
    """All judges, the rubric and DAFE; LLM roles use ``model`` when given. ``skip_llm``
    evaluates only the judges that make no model call (DAFE only if all three are such).
    ``forms``: only the no-call judges and the expected grader in each form."""
    if forms:
        params = params.model_copy(update={"llm": params.llm.model_copy(update={"cache": False})})
        skip_llm = True
    jp = params.judge
    if model is not None:
        judges = {
            n: s.model_copy(update={"model": model}) if s.kind == "llm" else s
            for n, s in jp.judges.items()
        }
        params = params.model_copy(
            update={"judge": jp.model_copy(update={"judges": judges, "correctness_model": model})}
        )
        jp = params.judge
    ctx = JudgeContext(params, stage="calibration")
    human = [float(i["similarity"]) for i in items]
    jitems = [AnswerItem("", i["sentence2"], (i["sentence1"],)) for i in items]
    out: dict[str, Any] = {"items": len(items), "judges": [], "model": model or params.llm.model}

    cache: dict[str, list[AnswerVerdict]] = {}
    for name, spec in jp.judges.items():
        judge = build_judge(name, spec, ctx)
        if skip_llm and judge.uses_llm:
            continue
        t0 = time.perf_counter()
        cache[name] = judge.judge(jitems)
        out["judges"].append(evaluate_judge(name, cache[name], human, time.perf_counter() - t0))

    if forms:
        out["correctness"] = out["dafe"] = None
        out["correctness_expected"] = None
        out["forms"] = [
            _rubric(jitems, human, params, expected=True, reason=f == "generated") | {"form": f}
            for f in forms
        ]
        return out
    if skip_llm:
        out["correctness"] = out["correctness_expected"] = None
        if not all(n in cache for n in (*jp.primaries, jp.arbitrator)):
            out["dafe"] = None
            return out
    else:
        out["correctness"] = _rubric(jitems, human, params)
        out["correctness_expected"] = _rubric(jitems, human, params, expected=True)
    out["dafe"] = _dafe(jitems, human, params, cache)
    return out


def _rubric(
    jitems: list[AnswerItem],
    human: list[float],
    params: Params,
    expected: bool = False,
    reason: bool = False,
) -> dict[str, Any]:
    """The 0-1 rubric grader: JSON reply (``correctness``) or, with ``expected``, the
    probability-weighted level from one next-token call (``correctness_expected``; with
    ``reason`` the generated reason + digit instead)."""
    jp = params.judge
    ctx = JudgeContext(params, stage="calibration")
    model = params.llm.resolve(jp.correctness_model)
    t0, c0 = time.perf_counter(), time.process_time()
    if expected:
        graded = grade_correctness_expected(
            jitems, ctx.gateway, model, jp.prompt_version, params.llm.seed, reason,
            params.llm.temperature,
        )  # fmt: skip
    else:
        graded = grade_correctness(
            jitems, ctx.gateway, model, jp.prompt_version, params.llm.temperature, params.llm.seed
        )
    name = "correctness_expected" if expected else "correctness"
    rubric = [
        AnswerVerdict(
            name,
            g.score >= EQUIVALENT if g.score is not None else None,
            g.rationale,
            g.score,
            g.error,
        )
        for g in graded
    ]
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    return evaluate_judge(name, rubric, human, seconds) | {
        "s_per_item": round(seconds / max(len(jitems), 1), 3),
        "cpu_s_per_item": round(cpu / max(len(jitems), 1), 3),
        "forms_seen": sorted({g.form or "" for g in graded if g.error is None}),
    }


def _dafe(
    jitems: list[AnswerItem],
    human: list[float],
    params: Params,
    cache: dict[str, list[AnswerVerdict]],
) -> dict[str, Any]:
    jp = params.judge
    # DAFE reuses the verdicts above (a judge is deterministic; LLM calls would be cache hits)
    replay = {n: _Replay(n, v, jitems) for n, v in cache.items()}
    p1, p2 = (replay[n] for n in jp.primaries)
    decisions = run_dafe(jitems, p1, p2, replay[jp.arbitrator])
    finals = [AnswerVerdict("dafe", d.final, d.resolution, None, d.error) for d in decisions]
    return evaluate_judge("dafe", finals, human, 0.0) | {
        "summary": {
            k: v
            for k, v in dafe_summary(decisions).items()
            if k in ("disagreement_rate", "arbitrator_calls", "judge_calls_saved", "degraded")
        },
        "arbitrator_seen": len(replay[jp.arbitrator].asked),
    }


class _Replay:
    """A judge that answers from verdicts already computed for the same items (so DAFE's
    arbitrator is consulted, and counted, only on the items that need it)."""

    def __init__(self, name: str, verdicts: list[AnswerVerdict], items: list[AnswerItem]):
        self.name = name
        self.uses_llm = False
        self._by_item = dict(zip(map(id, items), verdicts, strict=True))
        self.asked: list[AnswerItem] = []

    def judge(self, items: Any) -> list[AnswerVerdict]:
        self.asked.extend(items)
        return [self._by_item[id(it)] for it in items]


def _f(v: float | None) -> str:
    return "   -  " if v is None else f"{v:6.3f}"


def _print(res: dict[str, Any]) -> None:
    rubrics = (res["correctness"], res.get("correctness_expected"), *res.get("forms", []))
    rows = [r for r in (*res["judges"], *rubrics, res["dafe"]) if r is not None]
    print(f"\nmodel for LLM roles: {res['model']}  ({res['items']} items)")
    print(
        f"{'judge':16s} {'fail':>4s} {'sec':>6s} | {'spearman':>8s} {'SE':>6s} {'tau_b':>6s} | "
        f"{'acc':>6s} {'macroF1':>7s} {'kappa':>6s} | {'F1 fail=wrong':>13s} {'kappa':>6s}"
    )
    for r in rows:
        if "form" in r:
            r = r | {"judge": f"expected/{r['form'][:4]}"}
        s = r["scores"] or {}
        a, w = r["binary"]["answered"], r["binary"]["fail=wrong"]
        print(
            f"{r['judge']:16s} {r['failures']:4d} {r['seconds']:6.1f} | "
            f"{_f(s.get('spearman')):>8s} {_f(s.get('spearman_se'))} "
            f"{_f(s.get('kendall_tau_b'))} | "
            f"{_f(a['accuracy'])} {_f(a['macro_f1']):>7s} {_f(a['kappa'])} | "
            f"{_f(w['macro_f1']):>13s} {_f(w['kappa'])}"
        )
    for r in res.get("forms", []):
        print(
            f"expected/{r['form']}: {r['s_per_item']} s/item (cpu {r['cpu_s_per_item']}),"
            f" forms seen {r['forms_seen']}"
        )
    if res["dafe"] is not None:
        print(f"DAFE: {res['dafe']['summary']}")
    for r in rows:
        for e in r["first_errors"]:
            print(f"  {r['judge']} failure e.g.: {e[:160]}")


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument(
        "--model",
        action="append",
        help="litellm model for the LLM roles, run after the embedded model (repeatable)",
    )
    ap.add_argument("--limit", type=int, default=None, help="first N items only")
    ap.add_argument("--params", default="params.yaml")
    ap.add_argument("--json", default=None, help="also write the results to this file")
    ap.add_argument("--skip-llm", action="store_true", help="only judges without model calls")
    ap.add_argument("--only", action="store_true", help="run only the --model models")
    ap.add_argument(
        "--form",
        action="append",
        choices=["probability", "generated"],
        help="only the expected grader in this form (repeatable), plus the no-call judges",
    )
    args = ap.parse_args(argv)

    data = Path(args.data)
    if not data.is_file():
        sys.exit(f"calibrate_correctness: {data} not found (expects ../shared/validation)")
    items = json.loads(data.read_text(encoding="utf-8"))[: args.limit]
    params = load_params(args.params)
    n_eq = sum(float(i["similarity"]) >= EQUIVALENT for i in items)
    print(f"{data}: {len(items)} pairs, {n_eq} equivalent (similarity >= {EQUIVALENT})")
    results = []
    for model in [None] if args.skip_llm else models_to_run(params, args.model, args.only):
        res = calibrate(items, params, model, args.skip_llm, args.form)
        results.append(res)
        _print(res)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2), encoding="utf-8")
