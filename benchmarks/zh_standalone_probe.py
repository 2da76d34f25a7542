"""Can a small model's hidden state tell a standalone Chinese question from one that leans on
its passage? Cross-validated AUC of a logistic-regression probe on the committed blind labels.

Every row of the ``benchmarks/data/answer_first_zh*labels*blind.jsonl`` sheets (hand labels of
generated Chinese questions, by helper agents, blind) gives a question and its ``standalone``
label. Each question is read by a local GGUF model (``--model``:
:func:`ragcourt.llm.hidden_states.pooled_states`, ``--pooling last`` or ``mean``), and a
logistic regression on the standardised states predicts the label. Folds are whole label
sheets (grouped K-fold), so a probe is always scored on questions of generation runs and
articles it never fitted on. A character n-gram TF-IDF model on the same folds is the baseline::

    python -m benchmarks zh_standalone_probe --model local/qwen2.5-coder-1.5b --pooling last

AUC is the chance that a standalone question scores above one that is not (0.5: no signal).
The threshold is the lowest out-of-fold score above which at least ``--precision`` of the
questions are standalone; ``--save`` fits the probe on every label with it and writes the
shipped weights (:mod:`ragcourt.qagen.standalone_probe`).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragcourt.core import offline
from ragcourt.llm.hidden_states import pooled_states
from ragcourt.qagen.standalone_probe import SHIPPED, fit_probe, precision_threshold

DATA = Path(__file__).resolve().parent / "data"


def labelled(exclude: Sequence[str] = ()) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(questions, standalone labels 0/1, the sheet each came from) of every blind sheet but
    those named in ``exclude``."""
    questions, labels, groups = [], [], []
    for sheet in sorted(DATA.glob("answer_first_zh*labels*blind.jsonl")):
        if sheet.name in exclude:
            continue
        for line in sheet.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if isinstance(row.get("standalone"), bool):
                questions.append(row["question"])
                labels.append(int(row["standalone"]))
                groups.append(sheet.name)
    return questions, np.array(labels), np.array(groups)


def out_of_fold(features: Any, labels: np.ndarray, groups: np.ndarray, model: Any) -> np.ndarray:
    """``model``'s P(standalone) of each question, fitted without its label sheet (one fold
    per group of sheets)."""
    from sklearn.model_selection import GroupKFold, cross_val_predict

    folds = GroupKFold(n_splits=min(6, len(set(groups))))
    p = cross_val_predict(model, features, labels, cv=folds, groups=groups, method="predict_proba")
    return np.asarray(p[:, 1])


def scored(p: np.ndarray, labels: np.ndarray) -> dict[str, float]:
    """AUC of out-of-fold scores ``p``, and the share standalone among the top 10%, 20% and
    30% of questions by score."""
    from sklearn.metrics import roc_auc_score

    order = np.argsort(-p, kind="stable")
    out = {"auc": round(float(roc_auc_score(labels, p)), 3)}
    for share in (10, 20, 30):
        top = order[: max(1, round(len(order) * share / 100))]
        out[f"standalone_in_top_{share}pct"] = round(float(labels[top].mean()), 3)
    return out


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--model", default="local/qwen2.5-coder-1.5b")
    ap.add_argument("--pooling", choices=("last", "mean"), default="last")
    ap.add_argument("--c", type=float, default=0.01, help="inverse L2 strength of the probe")
    ap.add_argument(
        "--precision", type=float, default=0.75,
        help="the threshold keeps questions whose out-of-fold share standalone is at least this",
    )  # fmt: skip
    ap.add_argument("--exclude", action="append", default=[], help="a label sheet to leave out")
    ap.add_argument("--save", action="store_true", help=f"fit on every label; write {SHIPPED}")
    args = ap.parse_args(argv)
    offline.apply()
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    questions, labels, groups = labelled(args.exclude)
    probe = make_pipeline(
        StandardScaler(), LogisticRegression(C=args.c, max_iter=2000, class_weight="balanced")
    )
    ngrams = make_pipeline(
        TfidfVectorizer(analyzer="char", ngram_range=(1, 3), min_df=2, sublinear_tf=True),
        LogisticRegression(max_iter=1000, class_weight="balanced"),
    )
    states = pooled_states(args.model, questions, args.pooling)
    oof = out_of_fold(states, labels, groups, probe)
    threshold = precision_threshold(oof, labels, args.precision)
    result: dict[str, Any] = {
        "questions": len(questions),
        "standalone_share": round(float(labels.mean()), 3),
        "sheets": len(set(groups)),
        "model": args.model,
        "pooling": args.pooling,
        "probe": scored(oof, labels),
        "char_ngrams": scored(out_of_fold(questions, labels, groups, ngrams), labels),
        "threshold": None if threshold is None else round(threshold, 4),
    }
    if threshold is None:
        result["note"] = f"no out-of-fold score keeps {args.precision:.0%} standalone: not saved"
    else:
        kept = oof >= threshold
        result["kept_at_threshold"] = round(float(kept.mean()), 3)
        result["standalone_kept"] = round(float(labels[kept].mean()), 3)
    if args.save and threshold is not None:
        fitted = fit_probe(
            states, labels, threshold, args.model, args.pooling, args.c,
            {"sheets": sorted(set(groups.tolist())), "fit": {k: result[k] for k in (
                "questions", "standalone_share", "probe", "kept_at_threshold",
                "standalone_kept")}, "precision": args.precision, "c": args.c,
             "command": "python -m benchmarks zh_standalone_probe --save"},
        )  # fmt: skip
        SHIPPED.parent.mkdir(parents=True, exist_ok=True)
        SHIPPED.write_text(fitted.to_json(), encoding="utf-8")
        result["saved"] = str(SHIPPED)
    print(json.dumps(result, indent=1))
