"""Pairwise judges: the protocol, the per-order verdict and the ``tournament.judge`` registry.

Vocabulary (shared with answer judges, see :mod:`ragcourt.judging.vocabulary`): a pairwise
judge *kind* (params ``tournament.judge``, null: the kind registered with ``default=True``; a
factory in :data:`PAIRWISE_JUDGES` taking a :class:`PairwiseContext`, what the tournament
hands its judge and nothing more) -> a configured :class:`PairwiseJudge`
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
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Protocol

import polars as pl

from ragcourt.core.registry import Registry
from ragcourt.tournament.params import TournamentView
from ragcourt.tournament.scoring import Probs

if TYPE_CHECKING:
    from ragcourt.llm import Gateway


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


@dataclass(eq=False)
class PairwiseContext:
    """What a pairwise judge factory gets: the params, the answers and QA tables, the
    per-answer correctness table (``read_correctness`` loads it on first use, so only a judge
    that needs it reads it) and the tournament stage's gateway (``shared_gateway``, else one of
    stage ``tournament`` made on first use)."""

    params: TournamentView
    answers: pl.DataFrame | None = None
    qa: pl.DataFrame | None = None
    correctness: pl.DataFrame | None = None
    read_correctness: Callable[[], pl.DataFrame] | None = field(default=None, repr=False)
    shared_gateway: Gateway | None = field(default=None, repr=False)

    @cached_property
    def gateway(self) -> Gateway:
        if self.shared_gateway is not None:
            return self.shared_gateway
        from ragcourt.llm import Gateway

        return Gateway(self.params.llm, stage="tournament")

    def correctness_table(self) -> pl.DataFrame | None:
        """The per-answer correctness table: as given, else read once, else None."""
        if self.correctness is None and self.read_correctness is not None:
            self.correctness = self.read_correctness()
        return self.correctness


PairwiseJudgeFactory = Callable[[PairwiseContext], PairwiseJudge]
PAIRWISE_JUDGES: Registry[PairwiseJudgeFactory] = Registry(
    "pairwise judge",
    builtins=("ragcourt.tournament.llm_judge", "ragcourt.tournament.correctness_margin"),
)


def judge_kind(params: TournamentView) -> str:
    """The pairwise judge kind ``tournament.judge`` names (null: the registry's default)."""
    return PAIRWISE_JUDGES.resolve(params.tournament.judge, "tournament.judge")


def judge_settings(kind: str, params: TournamentView) -> Any:
    """``tournament.judge_settings`` validated as ``kind``'s settings (None: it has none)."""
    key = "tournament.judge_settings"
    return PAIRWISE_JUDGES.settings(kind, params.tournament.judge_settings, key)
