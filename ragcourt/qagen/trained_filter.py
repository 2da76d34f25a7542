"""QA filter kind ``trained_answerability``: P(the question is answerable from its context
alone) by the trained answerability judge (:mod:`ragcourt.retrieval.trained_judges`; no LLM).

Select it for the answerability role with ``qagen.filter_kinds.answerability:
trained_answerability``; the pass mark stays ``qagen.thresholds.answerability`` (the judge's
fitted threshold is in ``ragcourt judges show``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ragcourt.qagen.filter_registry import QA_FILTERS, JudgeOutcome, JudgeSettings, QAItem
from ragcourt.retrieval.trained_judges.judges import WEIGHTS_DIR, shipped_judges

if TYPE_CHECKING:
    from ragcourt.llm import Gateway

TRAINED_ANSWERABILITY = "trained_answerability"


@QA_FILTERS.register(TRAINED_ANSWERABILITY)
def trained_answerability_filter(
    gw: Gateway, items: Sequence[QAItem], cfg: JudgeSettings, desc: str | None = None
) -> list[JudgeOutcome]:
    """P(answerable) of each item's question against its context, from the weights in
    ``cfg.trained_weights`` (null: the shipped ones)."""
    judges = shipped_judges(cfg.trained_weights or str(WEIGHTS_DIR))
    scores = judges.answerability([i.question for i in items], [i.context for i in items])
    return [
        JudgeOutcome(
            judge="answerability",
            score=s,
            reason=f"trained answerability P(answerable) {s:.3f}",
            model="trained/answerability",
            form="probability",
        )
        for s in scores
    ]
