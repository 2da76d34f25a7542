"""The built-in correctness graders, one class each, registered under the kind
``judge.correctness_mode`` names (spec §5): ``rubric`` and ``expected`` ask an LLM
(:mod:`ragcourt.judging.correctness`); ``similarity`` and ``trained`` use none. Each says
what graded in ``source`` (the judge summary's ``correctness.model``); building one loads
nothing (the trained judges load on first grade)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, Field

from ragcourt.core.errors import ConfigError
from ragcourt.judging.correctness import (
    grade_correctness,
    grade_correctness_expected,
    similarity_correctness,
)
from ragcourt.judging.semantic import EMBEDDING_SIMILARITY
from ragcourt.judging.trained_correctness import LEXICAL, trained_reference_scores
from ragcourt.judging.vocabulary import (
    CORRECTNESS_GRADERS,
    CORRECTNESS_MODE,
    TRAINED_SOURCE,
    AnswerItem,
    CorrectnessGrade,
    JudgeContext,
    VerdictsOf,
)


@dataclass
class _LLMGrader:
    """A grader asking ``judge.correctness_model`` (null: ``llm.model``) through the gateway."""

    ctx: JudgeContext

    @property
    def model(self) -> str:
        return self.ctx.params.llm.resolve(self.ctx.params.judge.correctness_model)

    @property
    def source(self) -> str:
        return self.model


class RubricGrader(_LLMGrader):
    """``rubric``: the RAGalyst 0-1 rubric, JSON rationale then score (one chat call each)."""

    def grade(self, items: Sequence[AnswerItem], verdicts_of: VerdictsOf) -> list[CorrectnessGrade]:
        jp, llm = self.ctx.params.judge, self.ctx.params.llm
        return grade_correctness(
            items, self.ctx.gateway, self.model, jp.prompt_version, llm.temperature, llm.seed
        )


class ExpectedGrader(_LLMGrader):
    """``expected``: E[rubric level] from the next-token distribution over the digits 0-4."""

    def grade(self, items: Sequence[AnswerItem], verdicts_of: VerdictsOf) -> list[CorrectnessGrade]:
        jp, llm = self.ctx.params.judge, self.ctx.params.llm
        return grade_correctness_expected(
            items,
            self.ctx.gateway,
            self.model,
            jp.prompt_version,
            llm.seed,
            jp.reason,
            llm.temperature,
        )


class SimilaritySettings(BaseModel, extra="forbid"):
    """The ``similarity`` grader's settings (``judge.correctness_settings``)."""

    judge: str = Field(
        default="ref_similarity",
        description="the embedding_similarity answer judge (a name under judge.judges) whose "
        "max cosine to a reference is the score",
    )


@dataclass
class SimilarityGrader:
    """``similarity``: clipped max cosine from the verdicts of the embedding_similarity
    answer judge its settings name (no LLM)."""

    judge: str

    @property
    def source(self) -> str:
        return f"judge {self.judge} (no LLM)"

    def grade(self, items: Sequence[AnswerItem], verdicts_of: VerdictsOf) -> list[CorrectnessGrade]:
        return similarity_correctness(verdicts_of(self.judge))


@dataclass
class TrainedGrader:
    """``trained``: the max over references of the trained correctness judge's score, in
    [0, 1] (:mod:`ragcourt.judging.trained_correctness`; no LLM; token F1 for CJK text)."""

    ctx: JudgeContext
    source: str = TRAINED_SOURCE

    def grade(self, items: Sequence[AnswerItem], verdicts_of: VerdictsOf) -> list[CorrectnessGrade]:
        out: list[CorrectnessGrade] = []
        for score, idx, lexical in trained_reference_scores(self.ctx.trained_judges, items):
            if idx < 0:
                out.append(CorrectnessGrade(None, "", "no reference answer"))
            else:
                how = LEXICAL if lexical else "trained correctness"
                out.append(CorrectnessGrade(score, f"{how} {score:.3f} (reference {idx + 1})"))
        return out


@CORRECTNESS_GRADERS.register("rubric")
def _rubric(ctx: JudgeContext) -> RubricGrader:
    return RubricGrader(ctx)


@CORRECTNESS_GRADERS.register("expected")
def _expected(ctx: JudgeContext) -> ExpectedGrader:
    return ExpectedGrader(ctx)


@CORRECTNESS_GRADERS.register("similarity", config=SimilaritySettings)
def _similarity(ctx: JudgeContext) -> SimilarityGrader:
    """One-line ConfigError unless the settings' judge is an embedding_similarity judge."""
    name = CORRECTNESS_MODE.settings(ctx.params).judge
    spec = ctx.params.judge.judges.get(name)
    if spec is None or spec.kind != EMBEDDING_SIMILARITY:
        raise ConfigError(
            f"judge.correctness_settings.judge: '{name}' must name an {EMBEDDING_SIMILARITY} "
            "judge under judge.judges (correctness_mode: similarity)"
        )
    return SimilarityGrader(name)


TRAINED_GRADER = "trained"  # the grader kind that loads the trained correctness judge


@CORRECTNESS_GRADERS.register(TRAINED_GRADER, default=True)
def _trained(ctx: JudgeContext) -> TrainedGrader:
    return TrainedGrader(ctx)
