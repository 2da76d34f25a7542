"""QA filter kinds that need no LLM: P(the question is answerable from its context alone).

- ``reader``: the trained reading model (:mod:`ragcourt.retrieval.reader`; the default);
- ``trained_answerability``: the linear trained answerability judge
  (:mod:`ragcourt.retrieval.trained_judges`).

Select one for the answerability role with ``qagen.filter_kinds.answerability``; the pass mark
stays ``qagen.thresholds.answerability`` (each model's fitted threshold is in
``ragcourt judges show``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ragcourt.qagen.filter_registry import QA_FILTERS, JudgeOutcome, JudgeSettings, QAItem
from ragcourt.retrieval.reader.model import shipped_reader
from ragcourt.retrieval.trained_judges.judges import WEIGHTS_DIR, shipped_judges

if TYPE_CHECKING:
    from ragcourt.llm import Gateway

TRAINED_ANSWERABILITY = "trained_answerability"
READER = "reader"


def _outcomes(scores: Sequence[float], what: str, model: str) -> list[JudgeOutcome]:
    return [
        JudgeOutcome(
            judge="answerability",
            score=s,
            reason=f"{what} P(answerable) {s:.3f}",
            model=model,
            form="probability",
        )
        for s in scores
    ]


@QA_FILTERS.register(TRAINED_ANSWERABILITY, default="answerability")
def trained_answerability_filter(
    gw: Gateway, items: Sequence[QAItem], cfg: JudgeSettings, desc: str | None = None
) -> list[JudgeOutcome]:
    """P(answerable) of each item's question against its context, from the weights in
    ``cfg.trained_weights`` (null: the shipped ones)."""
    judges = shipped_judges(cfg.trained_weights or str(WEIGHTS_DIR))
    scores = judges.answerability([i.question for i in items], [i.context for i in items])
    return _outcomes(scores, "trained answerability", "trained/answerability")


@QA_FILTERS.register(READER)
def reader_filter(
    gw: Gateway, items: Sequence[QAItem], cfg: JudgeSettings, desc: str | None = None
) -> list[JudgeOutcome]:
    """P(answerable) of each item's question against its context, by the shipped reader."""
    if not items:
        return []
    readings = shipped_reader().read([i.question for i in items], [i.context for i in items])
    return _outcomes([r.p_answerable for r in readings], "reader", "trained/reader")
