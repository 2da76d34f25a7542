"""P(standalone) of a Chinese question: a logistic-regression probe on a local model's reading.

A question is standalone when someone with only the question can tell what is asked (it names
its topic, its time, its speaker). Rules catch the words that lean on a passage (``这``,
``目前``, a pronoun: :mod:`ragcourt.qagen.questions_zh`); whether the topic is named at all is
a matter of reading. The probe reads the question with ``model``
(:func:`~ragcourt.llm.hidden_states.pooled_states`: the hidden state after its last token) and
scores p = σ(w · (x − μ) / s + b): μ and s standardise each feature, w and b were fitted on
blind hand labels of generated Chinese questions (``benchmarks/data``), and a question is kept
when p ≥ ``threshold``, the lowest score at which the labelled questions scoring that much
were at least ``precision`` standalone in cross-validation (one fold per label sheet).

Fitting and the shipped weights: ``python -m benchmarks zh_standalone_probe --save --exclude
answer_first_zh_probe_nr_labels_blind.jsonl`` (the seven sheets labelled before it shipped;
``docs/results/languages.md``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from ragcourt.llm.hidden_states import Pooling, pooled_states

SHIPPED = Path(__file__).with_name("weights") / "standalone_zh.json"


@dataclass(frozen=True)
class StandaloneProbe:
    """The fitted probe (module docstring) and where it came from."""

    model: str
    pooling: Pooling
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    threshold: float
    provenance: dict[str, Any]

    def scores(self, questions: Sequence[str], models_file: str | None = None) -> list[float]:
        """P(standalone) of each question."""
        if not questions:
            return []
        x = pooled_states(self.model, questions, self.pooling, models_file)
        z = (x - np.array(self.mean)) / np.array(self.scale) @ np.array(self.coef)
        return [float(v) for v in 1.0 / (1.0 + np.exp(-(z + self.intercept)))]

    def keeps(self, questions: Sequence[str], models_file: str | None = None) -> list[bool]:
        """Whether each question scores at least :attr:`threshold`."""
        return [p >= self.threshold for p in self.scores(questions, models_file)]

    def to_json(self) -> str:
        return json.dumps(self.__dict__, indent=1) + "\n"


@cache
def load_probe(path: Path = SHIPPED) -> StandaloneProbe:
    """The probe saved at ``path`` (the shipped one by default), read once per process."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    return StandaloneProbe(
        model=raw["model"],
        pooling=raw["pooling"],
        mean=tuple(raw["mean"]),
        scale=tuple(raw["scale"]),
        coef=tuple(raw["coef"]),
        intercept=float(raw["intercept"]),
        threshold=float(raw["threshold"]),
        provenance=dict(raw["provenance"]),
    )


def precision_threshold(scores: np.ndarray, labels: np.ndarray, precision: float) -> float | None:
    """The lowest score t at which the items scoring >= t are at least ``precision`` labelled
    1; None when no t is."""
    order = np.argsort(-scores, kind="stable")
    hits = np.cumsum(labels[order]) / np.arange(1, len(order) + 1)
    ok = np.flatnonzero(hits >= precision)
    return float(scores[order][ok[-1]]) if ok.size else None


def fit_probe(
    states: np.ndarray,
    labels: np.ndarray,
    threshold: float,
    model: str,
    pooling: Pooling,
    c: float,
    provenance: dict[str, Any],
) -> StandaloneProbe:
    """Fit the probe on ``states`` (pooled, L2-normalised) and 0/1 ``labels``: standardise,
    then an L2 logistic regression of inverse strength ``c`` with balanced class weights."""
    from sklearn.linear_model import LogisticRegression

    mean = states.mean(axis=0)
    scale = states.std(axis=0)
    scale[scale == 0] = 1.0
    lr = LogisticRegression(C=c, max_iter=2000, class_weight="balanced")
    lr.fit((states - mean) / scale, labels)
    return StandaloneProbe(
        model=model,
        pooling=pooling,
        mean=tuple(float(v) for v in mean),
        scale=tuple(float(v) for v in scale),
        coef=tuple(float(v) for v in lr.coef_[0]),
        intercept=float(lr.intercept_[0]),
        threshold=threshold,
        provenance=provenance,
    )
