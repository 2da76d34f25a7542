"""The answer-judge and correctness-grader registries: built-in kinds, user plug-ins, and
one-line errors naming the params key."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from ragcourt.core.errors import ConfigError
from ragcourt.judging.builders import build_grader, build_judge, build_judges, registered_kinds
from ragcourt.judging.graders.builtin import (
    ExpectedGrader,
    RubricGrader,
    SimilarityGrader,
)
from ragcourt.judging.params import JudgeSpec
from ragcourt.judging.vocabulary import (
    ANSWER_JUDGES,
    CORRECTNESS_GRADERS,
    AnswerItem,
    AnswerVerdict,
    JudgeContext,
    register_judge,
)
from ragcourt.orchestration.params import Params, load_params

REPO_PARAMS = Path(__file__).resolve().parents[3] / "params.yaml"


def _params() -> Params:
    return load_params(REPO_PARAMS)


@dataclass
class LengthJudge:
    """A user judge: correct when the answer is at most ``limit`` characters long."""

    name: str
    limit: int
    uses_llm: bool = False

    def judge(self, items: Sequence[AnswerItem]) -> list[AnswerVerdict]:
        return [AnswerVerdict(self.name, len(it.answer) <= self.limit) for it in items]


def test_builtin_answer_judge_kinds_are_registered_by_the_builders() -> None:
    assert registered_kinds() == [
        "containment",
        "embedding_similarity",
        "llm",
        "token_f1",
        "trained",
    ]
    assert CORRECTNESS_GRADERS.kinds() == ["expected", "rubric", "similarity", "trained"]


def test_unknown_answer_judge_kind_names_the_key_and_the_known_kinds() -> None:
    with pytest.raises(ConfigError) as err:
        build_judge("x", JudgeSpec(kind="nope"), JudgeContext(_params()))
    assert str(err.value) == (
        "judge.judges.x.kind: unknown answer judge 'nope' "
        "(registered: containment, embedding_similarity, llm, token_f1, trained)"
    )
    with pytest.raises(ConfigError, match=r"judge 'ghost' is not defined under judge\.judges"):
        build_judges(["ghost"], JudgeContext(_params()))


def test_a_user_judge_kind_plugs_in_with_register_judge() -> None:
    assert register_judge == ANSWER_JUDGES.register

    @register_judge("test_short_answer")
    def _short(name: str, spec: JudgeSpec, ctx: JudgeContext) -> LengthJudge:
        return LengthJudge(name, int(spec.threshold or 10))

    judge = build_judge(
        "short", JudgeSpec(kind="test_short_answer", threshold=5), JudgeContext(_params())
    )
    verdicts = judge.judge([AnswerItem("q", "1803", ("1803",)), AnswerItem("q", "in 1803 AD", ())])
    assert [v.verdict for v in verdicts] == [True, False]
    assert register_judge("test_short_answer")(_short) is _short  # same factory again: no-op
    taken = "answer judge kind 'test_short_answer' is already registered"
    with pytest.raises(ConfigError, match=taken):
        register_judge("test_short_answer")(lambda name, spec, ctx: LengthJudge(name, 1))


def test_default_judges_build_without_a_gateway() -> None:
    ctx = JudgeContext(_params())
    judges = {n: build_judge(n, s, ctx) for n, s in ctx.params.judge.judges.items()}
    assert {n: j.uses_llm for n, j in judges.items()} == {
        "token_f1": False,
        "ref_similarity": False,
        "trained": False,
        "llm": True,
    }
    assert "gateway" not in ctx.__dict__  # LLM judges create the gateway on first use


@pytest.mark.parametrize(
    ("mode", "grader"),
    [("rubric", RubricGrader), ("expected", ExpectedGrader), ("similarity", SimilarityGrader)],
)
def test_correctness_mode_selects_its_grader(mode: str, grader: type) -> None:
    params = _params().model_copy(deep=True)
    params.judge.correctness_mode = mode
    assert isinstance(build_grader(JudgeContext(params)), grader)


def test_similarity_grader_reads_the_verdicts_of_the_correctness_judge() -> None:
    asked: list[str] = []

    def verdicts_of(name: str) -> list[AnswerVerdict]:
        asked.append(name)
        return [AnswerVerdict(name, True, score=1.2), AnswerVerdict(name, None, error="boom")]

    grades = SimilarityGrader("sim").grade([AnswerItem("q", "a", ("r",))] * 2, verdicts_of)
    assert asked == ["sim"]
    assert (grades[0].score, grades[1].score, grades[1].error) == (1.0, None, "boom")


def test_unknown_correctness_mode_names_the_key() -> None:
    message = r"^judge\.correctness_mode: unknown correctness grader 'nope' \(registered: "
    with pytest.raises(ConfigError, match=message):
        CORRECTNESS_GRADERS.get("nope", "judge.correctness_mode")
