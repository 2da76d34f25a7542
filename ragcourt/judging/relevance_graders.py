"""Built-in relevance graders (``judge.relevance_grader``), registered in
:data:`ragcourt.judging.vocabulary.RELEVANCE_GRADERS`.

``llm``: RAGElo 0/1/2 by ``judge.relevance_model`` (spec §5): with a one-token prompt version
and ``judge.reason`` false, the grade is read from the next-token probabilities of the labels
(its requests share a batch with UDCG's, so a shared passage prefix is read once); otherwise a
written reason and the label (:func:`ragcourt.judging.relevance.grade_passage_relevance`).

``trained``: the trained relevance judge's P(relevant) = p (no LLM,
:mod:`ragcourt.retrieval.trained_judges`). ``reader``: the trained reading model's
P(the question is answerable from this passage alone) = p (no LLM,
:mod:`ragcourt.retrieval.reader`): a passage that only repeats the question is not relevant.

For both, grade 0 when p < t (the model's fitted threshold), 2 when p >= (1 + t) / 2, else 1;
``relevance_expected`` = 2p. UDCG reads the same p: P(NO-RESPONSE) = 1 - p, so a passage's
utility is +p when relevant and -p otherwise (a passage that looks relevant but is not
distracts more).

Each grader says what graded in ``source`` and, when it also gives UDCG's P(NO-RESPONSE), in
``abstention_source`` (the judge summary's models); building one loads nothing (the trained
models load on first grade).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import polars as pl

from ragcourt.judging.llm_judges import one_token
from ragcourt.judging.relevance import (
    GRADE_LEVELS,
    grade_passage_relevance,
    relevance_token_requests,
    with_questions,
)
from ragcourt.judging.vocabulary import (
    RELEVANCE_GRADERS,
    TRAINED_SOURCE,
    Dists,
    JudgeContext,
    TokenAsk,
)

TRAINED_METHOD = "trained"  # grading_method / p_method of the trained judges


@dataclass
class LLMRelevanceGrader:
    """``llm``: the prompted 0/1/2 grade of ``judge.relevance_model`` (module doc)."""

    ctx: JudgeContext
    abstention_source: str | None = None  # UDCG asks its own model (judge.udcg.model)

    @property
    def source(self) -> str:
        return self.ctx.params.llm.resolve(self.ctx.params.judge.relevance_model)

    def token_requests(self, passages: pl.DataFrame, qa: pl.DataFrame) -> TokenAsk | None:
        jp, llm = self.ctx.params.judge, self.ctx.params.llm
        if jp.reason or not one_token("relevance", jp.prompt_version):
            return None
        model = llm.resolve(jp.relevance_model)
        reqs = relevance_token_requests(
            passages, qa, model, jp.prompt_version, llm.temperature, llm.seed
        )
        return reqs, list(GRADE_LEVELS)

    def grade(self, passages: pl.DataFrame, qa: pl.DataFrame, dists: Dists | None) -> pl.DataFrame:
        jp, llm = self.ctx.params.judge, self.ctx.params.llm
        return grade_passage_relevance(
            passages,
            qa,
            self.ctx.gateway,
            llm.resolve(jp.relevance_model),
            jp.prompt_version,
            llm.temperature,
            llm.seed,
            jp.reason,
            dists,
        )

    def no_response_probabilities(
        self, passages: pl.DataFrame, qa: pl.DataFrame
    ) -> pl.DataFrame | None:
        return None


@RELEVANCE_GRADERS.register("llm")
def _llm(ctx: JudgeContext) -> LLMRelevanceGrader:
    return LLMRelevanceGrader(ctx)


def trained_grade(p: float, threshold: float) -> int:
    """The 0/1/2 grade of P(relevant) ``p`` (module docstring)."""
    if p < threshold:
        return 0
    return 2 if p >= (1.0 + threshold) / 2.0 else 1


PairScorer = Callable[[Sequence[str], Sequence[str]], list[float]]


@dataclass
class ProbabilityRelevanceGrader:
    """A trained pair model's probability as relevance (``trained``, ``reader``: module doc);
    ``load`` gives (scorer, threshold) on first use; each (question, passage) is scored once
    per grader, for both the grade and UDCG."""

    load: Callable[[], tuple[PairScorer, float]]
    model: str
    source: str
    _seen: dict[tuple[str, str], float] = field(default_factory=dict, repr=False)

    @property
    def abstention_source(self) -> str:
        return self.source

    @cached_property
    def _loaded(self) -> tuple[PairScorer, float]:
        return self.load()

    def token_requests(self, passages: pl.DataFrame, qa: pl.DataFrame) -> TokenAsk | None:
        return None

    def _p(self, joined: pl.DataFrame) -> list[float]:
        pairs = list(zip(joined["question"].to_list(), joined["text"].to_list(), strict=True))
        todo = sorted({pair for pair in pairs if pair not in self._seen})
        score = self._loaded[0]
        scores = score([q for q, _ in todo], [t for _, t in todo]) if todo else []
        self._seen.update(zip(todo, scores, strict=True))
        return [self._seen[pair] for pair in pairs]

    def grade(self, passages: pl.DataFrame, qa: pl.DataFrame, dists: Dists | None) -> pl.DataFrame:
        joined = with_questions(passages, qa)
        p = self._p(joined)
        t = self._loaded[1]
        return joined.select("question_id", "chunk_id", "doc_id", "n_systems").with_columns(
            pl.Series("relevance", [trained_grade(x, t) for x in p], dtype=pl.Int8),
            pl.Series("relevance_expected", [2.0 * x for x in p], dtype=pl.Float64),
            pl.lit("probability").alias("form"),
            pl.lit(TRAINED_METHOD).alias("grading_method"),
            pl.lit(None, dtype=pl.String).alias("reason"),
            pl.lit(None, dtype=pl.String).alias("error"),
            pl.lit(self.model).alias("model"),
            pl.lit(None, dtype=pl.String).alias("prompt_version"),
        )

    def no_response_probabilities(
        self, passages: pl.DataFrame, qa: pl.DataFrame
    ) -> pl.DataFrame | None:
        joined = with_questions(passages, qa)
        p = self._p(joined)
        return joined.select("question_id", "chunk_id").with_columns(
            pl.Series("p_no_response", [1.0 - x for x in p], dtype=pl.Float64),
            pl.lit(TRAINED_METHOD).alias("p_method"),
            pl.lit(None, dtype=pl.String).alias("p_error"),
        )


TRAINED_RELEVANCE = "trained"  # the grader kind that loads the trained relevance judge


@RELEVANCE_GRADERS.register(TRAINED_RELEVANCE, default=True)
def _trained(ctx: JudgeContext) -> ProbabilityRelevanceGrader:
    """The trained relevance judge (of ``judge.trained_weights``) as a grader."""
    return ProbabilityRelevanceGrader(
        lambda: (ctx.trained_judges.relevance, ctx.trained_judges.model("relevance").threshold),
        "trained/relevance",
        TRAINED_SOURCE,
    )


def _shipped_reader() -> tuple[PairScorer, float]:
    from ragcourt.retrieval.reader.model import shipped_reader

    reader = shipped_reader()
    return reader.answerability, reader.threshold


@RELEVANCE_GRADERS.register("reader")
def _reader(ctx: JudgeContext) -> ProbabilityRelevanceGrader:
    return ProbabilityRelevanceGrader(_shipped_reader, "trained/reader", "trained reader (no LLM)")
