"""Fits the Chinese round trip's threshold on hand-labelled (span, reading) pairs: Cohen's kappa
of "F1 >= t and the numbers agree" against the label ``same_answer``, over t in 0.01 steps.

Only pairs that take the Chinese path of :func:`ragcourt.qagen.roundtrip.span_f1` count (their
joined text is Han script); the fitted value is the middle of the longest run of thresholds
that reach the best kappa, rounded to two decimals::

    python -m benchmarks answer_first_zh_fit benchmarks/data/answer_first_zh_roundtrip_pairs.jsonl \
        benchmarks/data/answer_first_zh_roundtrip_pairs_news.jsonl

Each row of the labels file: ``span``, ``reading`` (the reader's phrase), ``same_answer``
(true/false: the reading gives the span's answer, a qualifier or unit more or less allowed),
``source`` and ``labeller``.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def kappa(pred: Sequence[bool], labels: Sequence[bool]) -> float:
    """Cohen's kappa of two binary ratings: (po - pe) / (1 - pe)."""
    n = len(labels)
    po = sum(p == y for p, y in zip(pred, labels, strict=True)) / n
    p1, y1 = sum(pred) / n, sum(labels) / n
    pe = p1 * y1 + (1 - p1) * (1 - y1)
    return (po - pe) / (1 - pe) if pe < 1 else 0.0


def fit(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Kappa by threshold over the Chinese pairs of ``rows`` and the fitted threshold."""
    from ragcourt.corpus.language import cjk_script_language
    from ragcourt.qagen.roundtrip import numbers_agree, span_f1

    zh = [r for r in rows if cjk_script_language(r["reading"] + r["span"]) == "zh"]
    scored = [
        (span_f1(r["reading"], r["span"]), numbers_agree(r["reading"], r["span"])) for r in zh
    ]
    labels = [bool(r["same_answer"]) for r in zh]
    grid = [round(0.01 * i, 2) for i in range(1, 101)]
    kappas = {t: round(kappa([f >= t and ok for f, ok in scored], labels), 4) for t in grid}
    top = max(kappas.values())
    runs: list[list[float]] = []
    for t in grid:
        if kappas[t] == top and runs and round(runs[-1][-1] + 0.01, 2) == t:
            runs[-1].append(t)
        elif kappas[t] == top:
            runs.append([t])
    longest = max(runs, key=len)
    fitted = round((longest[0] + longest[-1]) / 2, 2)
    pred = [f >= fitted and ok for f, ok in scored]
    return {
        "pairs": len(rows),
        "chinese_pairs": len(zh),
        "same_answer": sum(labels),
        "best_kappa": top,
        "best_interval": [longest[0], longest[-1]],
        "fitted_threshold": fitted,
        "at_fitted": {
            "true_pos": sum(p and y for p, y in zip(pred, labels, strict=True)),
            "false_pos": sum(p and not y for p, y in zip(pred, labels, strict=True)),
            "false_neg": sum(y and not p for p, y in zip(pred, labels, strict=True)),
        },
        "kappa_by_threshold": {t: kappas[t] for t in grid if round(t * 100) % 5 == 0},
        "errors_at_fitted": [
            {"span": r["span"], "reading": r["reading"], "f1": round(f, 3), "label": y}
            for r, (f, _), p, y in zip(zh, scored, pred, labels, strict=True)
            if p != y
        ],
    }


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m benchmarks answer_first_zh_fit")
    ap.add_argument("files", type=Path, nargs="+", help="labelled pairs (JSONL), pooled")
    args = ap.parse_args(argv)
    rows = []
    for path in args.files:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                row = json.loads(line)
                if not isinstance(row.get("same_answer"), bool):
                    raise SystemExit(f"{path}:{n}: same_answer is not true/false")
                rows.append(row)
    print(json.dumps(fit(rows), indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
