"""Built-in relevance graders (``judge.relevance_grader``), registered in
:data:`ragcourt.judging.vocabulary.RELEVANCE_GRADERS`.

``llm``: RAGElo 0/1/2 by ``judge.relevance_model`` (spec §5): with a one-token prompt version
and ``judge.reason`` false, the grade is read from the next-token probabilities of the labels
(its requests share a batch with UDCG's, so a shared passage prefix is read once); otherwise a
written reason and the label (:func:`ragcourt.judging.relevance.grade_passage_relevance`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from ragcourt.judging.llm_judges import one_token
from ragcourt.judging.relevance import (
    GRADE_LEVELS,
    grade_passage_relevance,
    relevance_token_requests,
)
from ragcourt.judging.vocabulary import RELEVANCE_GRADERS, JudgeContext
from ragcourt.llm import ChatRequest, TokenDistribution


@dataclass
class LLMRelevanceGrader:
    """``llm``: the prompted 0/1/2 grade of ``judge.relevance_model`` (module doc)."""

    ctx: JudgeContext

    def token_requests(
        self, passages: pl.DataFrame, qa: pl.DataFrame
    ) -> tuple[list[ChatRequest], list[str]] | None:
        jp, llm = self.ctx.params.judge, self.ctx.params.llm
        if jp.reason or not one_token("relevance", jp.prompt_version):
            return None
        model = llm.resolve(jp.relevance_model)
        reqs = relevance_token_requests(
            passages, qa, model, jp.prompt_version, llm.temperature, llm.seed
        )
        return reqs, list(GRADE_LEVELS)

    def grade(
        self,
        passages: pl.DataFrame,
        qa: pl.DataFrame,
        dists: Sequence[TokenDistribution] | None,
    ) -> pl.DataFrame:
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


@RELEVANCE_GRADERS.register("llm")
def _llm(ctx: JudgeContext) -> LLMRelevanceGrader:
    return LLMRelevanceGrader(ctx)
