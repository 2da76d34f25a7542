"""Measuring a reader (or any pair scorer) on held-out data: answerability agreement, span F1
and the question-echo test.

- :func:`answerability_report`: AUC, and Cohen's kappa at a threshold chosen on a calibration
  part (a hash split of the items) and measured on the rest, plus a 5-fold figure (threshold
  chosen on four folds, kappa on the fifth).
- :func:`echo_cases`: per held-out question, an unrelated paragraph of its article (one that
  does not hold the answer) with the question pasted in, in several forms, beside the true
  paragraph. :func:`echo_report` gives the share of echo passages below the threshold and the
  share of questions for which an echo passage outscores the true one.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from sklearn.metrics import cohen_kappa_score, roc_auc_score

from ragcourt.corpus.answer_match import token_f1
from ragcourt.retrieval.reader.examples import echo_text, insert_at_sentence
from ragcourt.retrieval.trained_judges.squad_data import SquadArticle, stable_split

Scorer = Callable[[Sequence[str], Sequence[str]], list[float]]

# forms the training data never uses (ECHO_FORMS of .examples are the trained ones)
UNSEEN_ECHO_FORMS = ("faq", "people_ask", "title_case", "lower_no_mark")


def kappa_threshold(y: np.ndarray, p: np.ndarray) -> float:
    """The threshold among the scores' midpoints that maximises Cohen's kappa."""
    values = np.unique(p)
    cands = (values[:-1] + values[1:]) / 2 if len(values) > 1 else values
    best_t, best_k = 0.5, -2.0
    for t in cands:
        k = cohen_kappa_score(y, (p >= t).astype(int))
        if k > best_k:
            best_t, best_k = float(t), float(k)
    return best_t


def answerability_report(
    y: np.ndarray, p: np.ndarray, keys: Sequence[str], seed: int = 0
) -> dict[str, float]:
    """AUC; kappa on the ``report`` half at the threshold chosen on the ``calibration`` half
    (split by a hash of each key); the mean 5-fold kappa; and the threshold fitted on all."""
    calib = np.array([stable_split(k, 50) == "dev" for k in keys])
    t_cal = kappa_threshold(y[calib], p[calib])
    rng = np.random.default_rng(seed)
    folds = rng.permutation(len(y)) % 5
    kappas = []
    for f in range(5):
        t = kappa_threshold(y[folds != f], p[folds != f])
        kappas.append(cohen_kappa_score(y[folds == f], (p[folds == f] >= t).astype(int)))
    report = ~calib
    return {
        "auc": float(roc_auc_score(y, p)),
        "auc_report_half": float(roc_auc_score(y[report], p[report])),
        "threshold_calibration_half": t_cal,
        "kappa_report_half": float(cohen_kappa_score(y[report], (p[report] >= t_cal).astype(int))),
        "kappa_5fold": float(np.mean(kappas)),
        "threshold_all": kappa_threshold(y, p),
        "items": float(len(y)),
        "answerable_share": float(y.mean()),
    }


@dataclass(frozen=True)
class EchoCase:
    """One question, its true paragraph, and echo passages (form -> passage)."""

    question: str
    answer: str
    true_passage: str
    echoes: dict[str, str]


def unseen_echo(question: str, form: str) -> str:
    """Echo forms never used in training (:data:`UNSEEN_ECHO_FORMS`)."""
    q = question.strip()
    if form == "faq":
        return f"Frequently asked: {q} See below for details."
    if form == "people_ask":
        return f"People often ask {q.rstrip('?').lower()}."
    if form == "title_case":
        return q.rstrip("?").title()
    return q.rstrip("?").lower()


def echo_cases(
    articles: Sequence[SquadArticle], n: int, seed: int, forms: Sequence[str]
) -> list[EchoCase]:
    """Up to ``n`` cases from ``articles`` (module doc), seeded; ``forms`` are trained
    (:data:`~.examples.ECHO_FORMS`) or unseen (:data:`UNSEEN_ECHO_FORMS`) forms."""
    from ragcourt.retrieval.reader.examples import ECHO_FORMS

    rng = random.Random(seed)
    pool = [
        (art, pi, q)
        for art in articles
        for pi, qs in enumerate(art.questions)
        for q in qs
        if len(art.paragraphs) > 1
    ]
    rng.shuffle(pool)
    out: list[EchoCase] = []
    for art, pi, q in pool:
        if len(out) >= n:
            break
        others = [
            i for i, p in enumerate(art.paragraphs)
            if i != pi and q.answer.lower() not in p.lower()
        ]  # fmt: skip
        if not others:
            continue
        base = art.paragraphs[rng.choice(others)]
        echoes = {}
        for form in forms:
            text = (
                echo_text(q.question, form) if form in ECHO_FORMS else unseen_echo(q.question, form)
            )
            echoes[form], _ = insert_at_sentence(base, text, rng)
        out.append(EchoCase(q.question, q.answer, art.paragraphs[pi], echoes))
    return out


def echo_report(cases: Sequence[EchoCase], score: Scorer, threshold: float) -> dict[str, float]:
    """Share of echo passages scored below ``threshold`` (overall and per form), and share of
    (question, form) where the echo passage outscores the true paragraph."""
    forms = list(cases[0].echoes) if cases else []
    qs = [c.question for c in cases]
    true = np.asarray(score(qs, [c.true_passage for c in cases]))
    out: dict[str, float] = {
        "questions": float(len(cases)),
        "true_above": float((true >= threshold).mean()),
    }
    below_all, outrank_all = [], []
    for form in forms:
        s = np.asarray(score(qs, [c.echoes[form] for c in cases]))
        below = s < threshold
        outrank = s > true
        out[f"below_{form}"] = float(below.mean())
        out[f"outranks_{form}"] = float(outrank.mean())
        below_all.append(below)
        outrank_all.append(outrank)
    if forms:
        out["below"] = float(np.concatenate(below_all).mean())
        out["outranks"] = float(np.concatenate(outrank_all).mean())
    return out


def span_f1(predicted: Sequence[str | None], gold: Sequence[str]) -> float:
    """Mean SQuAD token F1 of predicted spans (None counts 0)."""
    return float(np.mean([token_f1(p or "", g) for p, g in zip(predicted, gold, strict=True)]))
