"""Plug-in kinds with their own settings: ``register(kind, config=Model)``; params give the
settings as a mapping, validated against the kind's model (one-line errors naming the key and
field); a kind without a model refuses settings; ``described`` lists them for ``ragcourt
kinds``. A pairwise judge with its own setting is one module (here written to a temp file and
imported as a plug-in would be)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from _plugins import load_plugin
from pydantic import BaseModel, Field
from typer.testing import CliRunner

from ragcourt.cli.main import app
from ragcourt.core.errors import ConfigError
from ragcourt.core.registry import Registry
from ragcourt.judging.vocabulary import JudgeContext
from ragcourt.orchestration.params import Params
from ragcourt.tournament.builders import build_pairwise_judge
from ragcourt.tournament.correctness_margin import CorrectnessMarginJudge
from ragcourt.tournament.pairwise import PAIRWISE_JUDGES, OrderKey, PairwiseContext
from ragcourt.tournament.params import TournamentParams


class _Knobs(BaseModel, extra="forbid"):
    depth: int = Field(default=3, ge=1, description="how deep it looks")
    name: str = Field(description="what it is called")


def test_settings_are_validated_against_the_kinds_model() -> None:
    reg: Registry[object] = Registry("widget")
    reg.register("knobbed", config=_Knobs)(object())
    reg.register("plain")(object())
    got = reg.settings("knobbed", {"name": "x"}, "widgets.w1.settings")
    assert isinstance(got, _Knobs) and got.depth == 3 and got.name == "x"
    with pytest.raises(ConfigError, match=r"^widgets\.w1\.settings\.depth: .*greater than or"):
        reg.settings("knobbed", {"name": "x", "depth": 0}, "widgets.w1.settings")
    with pytest.raises(ConfigError, match=r"^widgets\.w1\.settings\.colour: Extra inputs"):
        reg.settings("knobbed", {"name": "x", "colour": 1}, "widgets.w1.settings")
    assert reg.settings("plain", {}, "k") is None
    with pytest.raises(ConfigError, match=r"^k: widget 'plain' takes no settings \(depth\)$"):
        reg.settings("plain", {"depth": 2}, "k")
    with pytest.raises(ConfigError, match=r"unknown widget 'nope'"):
        reg.settings("nope", {}, "k")
    knobbed, plain = reg.described()
    assert [(s.name, s.type, s.default, s.description) for s in knobbed.settings] == [
        ("depth", "int", "3", "how deep it looks"),
        ("name", "str", "required", "what it is called"),
    ]
    assert plain.kind == "plain" and plain.settings == ()


PLUGIN = """
from pydantic import BaseModel, Field

from ragcourt.tournament.pairwise import PAIRWISE_JUDGES, OrderVerdict, judge_settings
from ragcourt.tournament.scoring import Probs


class CoinSettings(BaseModel, extra="forbid"):
    p_first: float = Field(default=0.5, ge=0, le=1, description="P(the first answer wins)")


class CoinJudge:
    name = "coin"

    def __init__(self, p_first: float) -> None:
        self.p_first = p_first

    def judge(self, keys):
        return [OrderVerdict(Probs(self.p_first, 1 - self.p_first, 0.0)) for _ in keys]


@PAIRWISE_JUDGES.register("coin_for_test", config=CoinSettings)
def _coin(ctx):
    return CoinJudge(judge_settings("coin_for_test", ctx.params).p_first)
"""


def _ctx(judge: str, settings: dict[str, object], **tables: pl.DataFrame) -> PairwiseContext:
    tp = TournamentParams(judge=judge, judge_settings=settings)
    return PairwiseContext(Params(tournament=tp), **tables)  # type: ignore[arg-type]


def test_a_pairwise_judge_with_its_own_setting_is_one_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    load_plugin(PLUGIN, "coin_judge_for_test", PAIRWISE_JUDGES, tmp_path, monkeypatch)
    key = OrderKey("a", "b", "q1")
    judge = build_pairwise_judge("coin_for_test", _ctx("coin_for_test", {"p_first": 0.9}))
    (verdict,) = judge.judge([key])
    assert verdict.probs is not None and verdict.probs.a == pytest.approx(0.9)
    with pytest.raises(ConfigError, match=r"^tournament\.judge_settings\.p_first: "):
        build_pairwise_judge("coin_for_test", _ctx("coin_for_test", {"p_first": 2}))
    out = CliRunner().invoke(app, ["kinds", "pairwise_judge"], terminal_width=200)
    assert out.exit_code == 0 and "coin_for_test" in out.output and "p_first" in out.output


def test_correctness_margin_reads_its_settings_and_llm_refuses_any() -> None:
    table = pl.DataFrame(
        {"system": ["a", "b"], "question_id": ["q", "q"], "correctness": [0.6, 0.5]}
    ).with_columns(pl.lit(None, dtype=pl.String).alias("error"))
    ctx = _ctx("correctness_margin", {"scale": 0.3, "tie_band": 0.0}, correctness=table)
    judge = build_pairwise_judge("correctness_margin", ctx)
    assert isinstance(judge, CorrectnessMarginJudge)
    assert (judge.scale, judge.tie_band) == (0.3, 0.0)
    bad = _ctx("correctness_margin", {"scale": 0}, correctness=table)
    with pytest.raises(ConfigError, match=r"^tournament\.judge_settings\.scale: .*greater than 0"):
        build_pairwise_judge("correctness_margin", bad)
    with pytest.raises(ConfigError, match=r"pairwise judge 'llm' takes no settings \(scale\)"):
        build_pairwise_judge("llm", _ctx("llm", {"scale": 0.3}))
    assert "correctness_margin" in PAIRWISE_JUDGES.kinds()


ANSWER_PLUGIN = """
from pydantic import BaseModel, Field

from ragcourt.judging.vocabulary import ANSWER_JUDGES, AnswerVerdict


class LengthSettings(BaseModel, extra="forbid"):
    max_words: int = Field(default=5, ge=1, description="longest answer judged correct")


class LengthJudge:
    uses_llm = False

    def __init__(self, name, max_words):
        self.name, self.max_words = name, max_words

    def judge(self, items):
        return [AnswerVerdict(self.name, len(i.answer.split()) <= self.max_words) for i in items]


@ANSWER_JUDGES.register("length_for_test", config=LengthSettings)
def _length(name, spec, ctx):
    s = ANSWER_JUDGES.settings(spec.kind, spec.settings, f"judge.judges.{name}.settings")
    return LengthJudge(name, s.max_words)
"""


def test_an_answer_judge_with_its_own_setting_is_one_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ragcourt.judging.builders import build_judge
    from ragcourt.judging.params import JudgeParams, JudgeSpec
    from ragcourt.judging.vocabulary import ANSWER_JUDGES, AnswerItem

    load_plugin(ANSWER_PLUGIN, "length_judge_for_test", ANSWER_JUDGES, tmp_path, monkeypatch)

    one = JudgeSpec(kind="length_for_test", settings={"max_words": 2})
    judges = JudgeParams().judges | {"short": one}  # beside the primaries it names
    ctx = JudgeContext(Params(judge=JudgeParams(judges=judges)))
    judge = build_judge("short", one, ctx)
    items = [AnswerItem("q", "in 1851", ("1851",)), AnswerItem("q", "it was in 1851", ("1851",))]
    assert [v.verdict for v in judge.judge(items)] == [True, False]
    bad = JudgeSpec(kind="length_for_test", settings={"max_words": "many"})
    with pytest.raises(ConfigError, match=r"^judge\.judges\.short\.settings\.max_words: "):
        build_judge("short", bad, ctx)
    plain = JudgeSpec(kind="token_f1", threshold=0.5, settings={"max_words": 2})
    with pytest.raises(ConfigError, match=r"answer judge 'token_f1' takes no settings"):
        build_judge("f1", plain, ctx)


GRADER_PLUGIN = """
from pydantic import BaseModel, Field

from ragcourt.judging.vocabulary import CORRECTNESS_GRADERS, CorrectnessGrade, CORRECTNESS_MODE


class WordsSettings(BaseModel, extra="forbid"):
    words: int = Field(default=3, ge=1, description="answer length (words) that scores 1")


class WordsGrader:
    source = "answer length (no LLM)"

    def __init__(self, words):
        self.words = words

    def grade(self, items, verdicts_of):
        return [CorrectnessGrade(min(1.0, len(i.answer.split()) / self.words), "") for i in items]


@CORRECTNESS_GRADERS.register("words_for_test", config=WordsSettings)
def _words(ctx):
    return WordsGrader(CORRECTNESS_MODE.settings(ctx.params).words)
"""


def test_a_correctness_grader_with_its_own_setting_is_one_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ragcourt.judging.builders import build_grader
    from ragcourt.judging.params import JudgeParams
    from ragcourt.judging.vocabulary import CORRECTNESS_GRADERS, AnswerItem, source_of

    load_plugin(GRADER_PLUGIN, "words_grader_for_test", CORRECTNESS_GRADERS, tmp_path, monkeypatch)

    def ctx(settings: dict[str, object]) -> JudgeContext:
        jp = JudgeParams(correctness_mode="words_for_test", correctness_settings=settings)
        return JudgeContext(Params(judge=jp))

    grader = build_grader(ctx({"words": 4}))
    items = [AnswerItem("q", "in 1851", ("1851",)), AnswerItem("q", "it was in 1851", ("1851",))]
    assert [g.score for g in grader.grade(items, lambda name: [])] == [0.5, 1.0]
    assert source_of(grader, "?") == "answer length (no LLM)"
    with pytest.raises(ConfigError, match=r"^judge\.correctness_settings\.words: .*greater than"):
        build_grader(ctx({"words": 0}))
    with pytest.raises(ConfigError, match=r"^judge\.correctness_settings\.colour: Extra inputs"):
        build_grader(ctx({"colour": "red"}))
    out = CliRunner().invoke(app, ["kinds", "correctness_grader"], terminal_width=200)
    assert out.exit_code == 0 and "words_for_test" in out.output and "answer length" in out.output


RELEVANCE_PLUGIN = """
import polars as pl
from pydantic import BaseModel, Field

from ragcourt.judging.vocabulary import RELEVANCE_GRADER, RELEVANCE_GRADERS


class FixedSettings(BaseModel, extra="forbid"):
    grade: int = Field(default=1, ge=0, le=2, description="the grade of every passage")


class FixedGrader:
    def __init__(self, grade):
        self.value = grade

    def token_requests(self, passages, qa):
        return None

    def grade(self, passages, qa, dists):
        return passages.select("question_id", "chunk_id").with_columns(
            pl.lit(self.value, dtype=pl.Int8).alias("relevance")
        )

    def no_response_probabilities(self, passages, qa):
        return None


@RELEVANCE_GRADERS.register("fixed_for_test", config=FixedSettings)
def _fixed(ctx):
    return FixedGrader(RELEVANCE_GRADER.settings(ctx.params).grade)
"""


def test_a_relevance_grader_with_its_own_setting_is_one_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ragcourt.judging.builders import build_relevance_grader
    from ragcourt.judging.params import JudgeParams
    from ragcourt.judging.vocabulary import RELEVANCE_GRADERS

    load_plugin(RELEVANCE_PLUGIN, "fixed_grader_for_test", RELEVANCE_GRADERS, tmp_path, monkeypatch)

    def ctx(settings: dict[str, object]) -> JudgeContext:
        jp = JudgeParams(relevance_grader="fixed_for_test", relevance_settings=settings)
        return JudgeContext(Params(judge=jp))

    passages = pl.DataFrame({"question_id": ["q1", "q2"], "chunk_id": ["c1", "c2"]})
    graded = build_relevance_grader(ctx({"grade": 2})).grade(passages, pl.DataFrame(), None)
    assert graded["relevance"].to_list() == [2, 2]
    with pytest.raises(ConfigError, match=r"^judge\.relevance_settings\.grade: .*less than or"):
        build_relevance_grader(ctx({"grade": 3}))
    jp = JudgeParams(relevance_grader="llm", relevance_settings={"grade": 2})
    with pytest.raises(ConfigError, match=r"relevance grader 'llm' takes no settings \(grade\)"):
        build_relevance_grader(JudgeContext(Params(judge=jp)))
    out = CliRunner().invoke(app, ["kinds", "relevance_grader"], terminal_width=200)
    assert out.exit_code == 0 and "fixed_for_test" in out.output and "every passage" in out.output
