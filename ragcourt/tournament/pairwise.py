"""Pairwise judges: the protocol, the per-order verdict and the ``tournament.judge`` registry.

Vocabulary (shared with answer judges, see :mod:`ragcourt.judging.vocabulary`): a pairwise
judge *kind* (params ``tournament.judge``, a factory in :data:`PAIRWISE_JUDGES` taking the
:class:`~ragcourt.judging.vocabulary.JudgeContext`) -> a configured :class:`PairwiseJudge`
-> one :class:`OrderVerdict` per :class:`OrderKey`. A key is one *presentation order* of one
question of a pair: ``first`` is shown as "A", ``second`` as "B"; the verdict holds the
probabilities over the labels A / B / C (C = tie) or an error. Both orders of a question are
combined into its score (:mod:`ragcourt.tournament.scoring`) by the judgement memo
(:mod:`ragcourt.tournament.memo`); per-question scores sum to a match score.

Built-in kinds register in their own modules (``llm``: :mod:`ragcourt.tournament.llm_judge`;
``correctness_margin``: :mod:`ragcourt.tournament.correctness_margin`);
:mod:`ragcourt.tournament.builders` builds the configured judge (the registry imports
the built-ins).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from ragcourt.core.registry import Registry
from ragcourt.tournament.scoring import Probs

if TYPE_CHECKING:
    from ragcourt.judging.vocabulary import JudgeContext


@dataclass(frozen=True)
class OrderKey:
    """One presentation order of one question of a pair (``first`` is shown as "A")."""

    first: str
    second: str
    question_id: str


@dataclass(frozen=True)
class OrderVerdict:
    """Label probabilities of one presentation order ("A" = first), or an error."""

    probs: Probs | None
    rationale: str = ""
    error: str | None = None


class PairwiseJudge(Protocol):
    """A configured pairwise judge."""

    name: str

    def judge(self, keys: Sequence[OrderKey]) -> list[OrderVerdict]:
        """One verdict per key, in order; failures are verdicts with ``error`` set."""
        ...


PairwiseJudgeFactory = Callable[["JudgeContext"], PairwiseJudge]
PAIRWISE_JUDGES: Registry[PairwiseJudgeFactory] = Registry(
    "pairwise judge",
    builtins=("ragcourt.tournament.llm_judge", "ragcourt.tournament.correctness_margin"),
)
