"""Build configured answer judges and correctness graders from params.

The registries of :mod:`ragcourt.judging.vocabulary` import their built-in kinds (and the
entry-point plug-ins) on first lookup. :func:`check_judge_params` validates every kind the
judge params name; unknown kinds are one-line ConfigErrors naming the key and the registered
kinds.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragcourt.core.errors import ConfigError
from ragcourt.judging.params import JudgeParams, JudgeSpec
from ragcourt.judging.vocabulary import (
    ANSWER_JUDGES,
    CORRECTNESS_GRADERS,
    CORRECTNESS_MODE,
    RELEVANCE_GRADER,
    RELEVANCE_GRADERS,
    AnswerJudge,
    CorrectnessGrader,
    JudgeContext,
    RelevanceGrader,
)


def registered_kinds() -> list[str]:
    """Every answer judge kind ``judge.judges.<name>.kind`` may name."""
    return ANSWER_JUDGES.kinds()


def build_judge(name: str, spec: JudgeSpec, ctx: JudgeContext) -> AnswerJudge:
    """Instantiate answer judge ``name`` from its spec (key ``judge.judges.<name>.kind``),
    its ``settings`` checked against the kind's settings model first."""
    factory = ANSWER_JUDGES.get(spec.kind, f"judge.judges.{name}.kind")
    ANSWER_JUDGES.settings(spec.kind, spec.settings, f"judge.judges.{name}.settings")
    return factory(name, spec, ctx)


def build_judges(names: Sequence[str], ctx: JudgeContext) -> dict[str, AnswerJudge]:
    """Build the named judges from ``ctx.params.judge.judges`` (each built once)."""
    specs = ctx.params.judge.judges
    out: dict[str, AnswerJudge] = {}
    for name in names:
        if name in out:
            continue
        if name not in specs:
            raise ConfigError(f"judge '{name}' is not defined under judge.judges")
        out[name] = build_judge(name, specs[name], ctx)
    return out


def check_judge_params(judge: JudgeParams) -> None:
    """Every kind the judge params name is registered (``judge.judges.<name>.kind``,
    ``judge.correctness_mode``, ``judge.relevance_grader``); else a one-line ConfigError
    listing the registered kinds."""
    for name, spec in judge.judges.items():
        ANSWER_JUDGES.check(spec.kind, f"judge.judges.{name}.kind")
    CORRECTNESS_GRADERS.resolve(judge.correctness_mode, CORRECTNESS_MODE.key)
    RELEVANCE_GRADERS.resolve(judge.relevance_grader, RELEVANCE_GRADER.key)


def build_grader(ctx: JudgeContext) -> CorrectnessGrader:
    """The correctness grader ``judge.correctness_mode`` names, its
    ``judge.correctness_settings`` checked against the kind's settings model first."""
    return CORRECTNESS_MODE.factory(ctx.params)(ctx)


def build_relevance_grader(ctx: JudgeContext) -> RelevanceGrader:
    """The relevance grader ``judge.relevance_grader`` names, its ``judge.relevance_settings``
    checked against the kind's settings model first."""
    return RELEVANCE_GRADER.factory(ctx.params)(ctx)
