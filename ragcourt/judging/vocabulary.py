"""The judge vocabulary, for both families of judges (spec §4, 5, 6).

Every pluggable judge follows one chain: a *kind* (a string params names, registered as a
factory in a :class:`~ragcourt.core.registry.Registry`) -> a configured *instance* (what the
factory returns, given a :class:`JudgeContext`) -> one *verdict* per item judged. An instance
never raises on one bad item: that item's verdict carries ``error`` (an error row downstream).

Answer judges (this package), params ``judge.judges.<name>.kind`` -> :data:`ANSWER_JUDGES`:
  :class:`AnswerJudge` instance, built from ``(name, JudgeSpec, JudgeContext)``, judges each
  :class:`AnswerItem` (question, candidate answer, references) -> :class:`AnswerVerdict`
  (correct / incorrect / failed, justification, optional score). DAFE combines the verdicts
  of two primaries and an arbitrator into one :class:`~ragcourt.judging.dafe.DafeDecision`.
A params key naming a kind may be null: the kind registered with ``default=True`` (its own
module says so; :data:`CORRECTNESS_MODE`, :data:`RELEVANCE_GRADER`).
Correctness graders, params ``judge.correctness_mode`` -> :data:`CORRECTNESS_GRADERS`:
  :class:`CorrectnessGrader` instance, built from the context, grades each item ->
  :class:`CorrectnessGrade` (score in [0, 1] or failed).
Relevance graders, params ``judge.relevance_grader`` -> :data:`RELEVANCE_GRADERS`:
  :class:`RelevanceGrader` instance, built from the context, grades each retrieved passage
  against its question -> a row of the ``relevance`` table (0/1/2 and its expectation).
Pairwise judges (:mod:`ragcourt.tournament.pairwise`), params ``tournament.judge`` ->
  ``PAIRWISE_JUDGES``: ``PairwiseJudge`` instance, built from the tournament's own
  ``PairwiseContext`` (params, answers, QA, correctness, gateway), judges each
  ``OrderKey`` (one presentation order of one question of a pair) -> ``OrderVerdict``
  (probabilities of A / B / tie); both orders combined give the per-question score, summed
  over questions the ``MatchScore`` of a match (:mod:`ragcourt.tournament.scoring`).

Plugging in: decorate a factory with ``@ANSWER_JUDGES.register("my_kind")`` (alias
``@register_judge``), ``@CORRECTNESS_GRADERS.register(...)`` or ``@PAIRWISE_JUDGES.register``
in a module of its own, with ``config=Model`` when the kind has settings of its own
(``judge.judges.<name>.settings``, ``judge.correctness_settings``,
``judge.relevance_settings``, ``tournament.judge_settings``; the factory reads them
validated, e.g. by ``CORRECTNESS_MODE.settings(params)``). Each registry names the modules holding
its built-in kinds and imports them on first lookup (a new correctness grader is one module in
:mod:`ragcourt.judging.graders`); a module outside the package plugs in as an entry point
(:mod:`ragcourt.core.registry`). :mod:`ragcourt.judging.builders` and
:mod:`ragcourt.tournament.builders` build instances; the registries' home modules (this one
and :mod:`ragcourt.tournament.pairwise`) never import their members.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Protocol, TypeAlias, runtime_checkable

import polars as pl

from ragcourt.core.errors import ConfigError
from ragcourt.core.registry import KindKey, Registry
from ragcourt.judging.params import JudgeSpec, JudgingView

if TYPE_CHECKING:
    from ragcourt.llm import ChatRequest, Gateway, TokenDistribution
    from ragcourt.retrieval.trained_judges.judges import TrainedJudges


TRAINED_SOURCE = "trained judge (no LLM)"
"""What graded, for the judge summary, when a trained judge did (no model call)."""


@dataclass(eq=False)
class JudgeContext:
    """What an answer judge or grader factory gets: the params, the stage whose accounting
    its gateway writes (``data/metrics/llm_<stage>.json``), a gateway created on first use
    (or the stage's own ``shared_gateway``) and the trained judges, loaded on first use.
    (Pairwise judges get the tournament's own context,
    :class:`ragcourt.tournament.pairwise.PairwiseContext`.)"""

    params: JudgingView
    stage: str = "judge"
    shared_gateway: Gateway | None = field(default=None, repr=False)

    @cached_property
    def gateway(self) -> Gateway:
        if self.shared_gateway is not None:
            return self.shared_gateway
        from ragcourt.llm import Gateway

        return Gateway(self.params.llm, stage=self.stage)

    @cached_property
    def trained_judges(self) -> TrainedJudges:
        """The trained judges of ``judge.trained_weights`` (null: the shipped weights)."""
        from ragcourt.retrieval.trained_judges.judges import WEIGHTS_DIR, shipped_judges

        return shipped_judges(self.params.judge.trained_weights or str(WEIGHTS_DIR))


def source_of(grader: object, default: str) -> str:
    """What a grader says graded (its optional ``source``: a model, or a named judge that
    calls none; the judge summary shows it), else ``default``."""
    source = getattr(grader, "source", None)
    return source if isinstance(source, str) else default


# ---------------------------------------------------------------- answer judges


@dataclass(frozen=True)
class AnswerItem:
    """One thing an answer judge judges: a candidate ``answer`` to ``question`` against
    ``references`` (any one reference may match, DAFE's multi-reference rule)."""

    question: str
    answer: str
    references: tuple[str, ...]


@dataclass(frozen=True)
class AnswerVerdict:
    """An answer judge's verdict on one item. ``verdict`` is True (correct), False
    (incorrect) or None when the judge failed (then ``error`` says why)."""

    judge: str
    verdict: bool | None
    justification: str = ""
    score: float | None = None
    error: str | None = None
    form: str | None = None  # LLM judges: "probability" | "generated"; None: no LLM

    @property
    def ok(self) -> bool:
        return self.error is None and self.verdict is not None


@runtime_checkable
class AnswerJudge(Protocol):
    """A configured answer judge. ``judge`` keeps the order and length of ``items``."""

    name: str
    uses_llm: bool

    def judge(self, items: Sequence[AnswerItem]) -> list[AnswerVerdict]: ...


AnswerJudgeFactory = Callable[[str, JudgeSpec, JudgeContext], AnswerJudge]
ANSWER_JUDGES: Registry[AnswerJudgeFactory] = Registry(
    "answer judge",
    builtins=(
        "ragcourt.judging.lexical",
        "ragcourt.judging.semantic",
        "ragcourt.judging.trained_correctness",
        "ragcourt.judging.llm_judges",
    ),
)
register_judge = ANSWER_JUDGES.register  # ``@register_judge("kind")``: usable in judge.judges


def require_threshold(name: str, spec: JudgeSpec, default: float | None = None) -> float:
    """The spec's threshold (or ``default``); ConfigError when neither is set."""
    thr = spec.threshold if spec.threshold is not None else default
    if thr is None:
        raise ConfigError(f"judge.judges.{name}.threshold is required for kind '{spec.kind}'")
    return float(thr)


# ---------------------------------------------------------------- correctness graders


@dataclass(frozen=True)
class CorrectnessGrade:
    """One graded answer: ``score`` in [0, 1], or None with ``error``."""

    score: float | None
    rationale: str
    error: str | None = None
    form: str | None = None  # "probability" | "generated"; None: no LLM (similarity)
    method: str | None = None  # grading_method (ragcourt.llm.grading_methods); None: no LLM


VerdictsOf = Callable[[str], Sequence[AnswerVerdict]]
"""Verdicts of the answer judge of that name on the items being graded (reused when DAFE
already ran it on them)."""


class CorrectnessGrader(Protocol):
    """A configured correctness grader; ``grade`` keeps the order and length of ``items``.
    It may say what graded in a ``source`` attribute (:func:`source_of`)."""

    def grade(
        self, items: Sequence[AnswerItem], verdicts_of: VerdictsOf
    ) -> list[CorrectnessGrade]: ...


CorrectnessGraderFactory = Callable[[JudgeContext], CorrectnessGrader]
CORRECTNESS_GRADERS: Registry[CorrectnessGraderFactory] = Registry(
    "correctness grader", builtins=("ragcourt.judging.graders",)
)


# ---------------------------------------------------------------- relevance graders


TokenAsk: TypeAlias = "tuple[list[ChatRequest], list[str]]"
"""Next-token requests and the labels whose probabilities they read."""
Dists: TypeAlias = "Sequence[TokenDistribution]"
"""The answers to a :data:`TokenAsk`'s requests, in order."""


class RelevanceGrader(Protocol):
    """A configured passage-relevance grader.

    ``grade(passages, qa, dists)`` returns the ``relevance`` table, one row per unique
    (question, passage) of ``passages`` (:func:`ragcourt.judging.relevance.unique_passages`).
    ``token_requests`` gives the next-token requests and labels it would ask, so the stage can
    send them in one batch with UDCG's (shared passage prefixes), or None; ``dists`` are their
    answers, in order. It may say what graded in ``source`` and, when it gives UDCG's
    P(NO-RESPONSE) itself, what gave it in ``abstention_source`` (the judge summary)."""

    def token_requests(self, passages: pl.DataFrame, qa: pl.DataFrame) -> TokenAsk | None: ...

    def grade(
        self, passages: pl.DataFrame, qa: pl.DataFrame, dists: Dists | None
    ) -> pl.DataFrame: ...

    def no_response_probabilities(
        self, passages: pl.DataFrame, qa: pl.DataFrame
    ) -> pl.DataFrame | None:
        """UDCG's P(NO-RESPONSE) per passage from this grader itself (the columns of
        :func:`ragcourt.judging.udcg.abstention_probabilities`), or None: UDCG asks its
        reader model (``judge.udcg.model``)."""
        ...


RelevanceGraderFactory = Callable[[JudgeContext], RelevanceGrader]
RELEVANCE_GRADERS: Registry[RelevanceGraderFactory] = Registry(
    "relevance grader", builtins=("ragcourt.judging.relevance_graders",)
)


# ---------------------------------------------------------------- the keys choosing a grader

# ``.kind(params)``: the kind the key names (null: the registry's default); ``.settings(params)``:
# the settings key validated against that kind's model (None: it has none); one-line errors
CORRECTNESS_MODE: KindKey[CorrectnessGraderFactory] = KindKey(
    CORRECTNESS_GRADERS, "judge.correctness_mode", "judge.correctness_settings"
)
RELEVANCE_GRADER: KindKey[RelevanceGraderFactory] = KindKey(
    RELEVANCE_GRADERS, "judge.relevance_grader", "judge.relevance_settings"
)
