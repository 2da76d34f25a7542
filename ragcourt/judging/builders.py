"""Build configured answer judges and correctness graders from params.

Importing this module imports the built-in kinds (:mod:`~ragcourt.judging.lexical`,
:mod:`~ragcourt.judging.semantic`, :mod:`~ragcourt.judging.llm_judges`,
:mod:`~ragcourt.judging.correctness`), whose decorators register them in the registries of
:mod:`ragcourt.judging.vocabulary`. Unknown kinds are one-line ConfigErrors naming the key.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragcourt.core.errors import ConfigError
from ragcourt.core.params import JudgeSpec
from ragcourt.judging import correctness, lexical, llm_judges, semantic
from ragcourt.judging.vocabulary import (
    ANSWER_JUDGES,
    CORRECTNESS_GRADERS,
    AnswerJudge,
    CorrectnessGrader,
    JudgeContext,
)

BUILTIN_MODULES = (lexical, semantic, llm_judges, correctness)  # registered on import


def registered_kinds() -> list[str]:
    """Every answer judge kind ``judge.judges.<name>.kind`` may name."""
    return ANSWER_JUDGES.kinds()


def build_judge(name: str, spec: JudgeSpec, ctx: JudgeContext) -> AnswerJudge:
    """Instantiate answer judge ``name`` from its spec (key ``judge.judges.<name>.kind``)."""
    return ANSWER_JUDGES.get(spec.kind, f"judge.judges.{name}.kind")(name, spec, ctx)


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


def build_grader(ctx: JudgeContext) -> CorrectnessGrader:
    """The correctness grader ``judge.correctness_mode`` names."""
    mode = ctx.params.judge.correctness_mode
    return CORRECTNESS_GRADERS.get(mode, "judge.correctness_mode")(ctx)
