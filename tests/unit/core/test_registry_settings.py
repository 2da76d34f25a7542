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
from ragcourt.core.params import Params, TournamentParams
from ragcourt.core.registry import Registry
from ragcourt.judging.vocabulary import JudgeContext
from ragcourt.tournament.builders import build_pairwise_judge
from ragcourt.tournament.correctness_margin import CorrectnessMarginJudge
from ragcourt.tournament.pairwise import PAIRWISE_JUDGES, OrderKey


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

from ragcourt.tournament.pairwise import PAIRWISE_JUDGES, OrderVerdict
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
    tp = ctx.params.tournament
    s = PAIRWISE_JUDGES.settings(tp.judge, tp.judge_settings, "tournament.judge_settings")
    return CoinJudge(s.p_first)
"""


def _ctx(judge: str, settings: dict[str, object], **tables: pl.DataFrame) -> JudgeContext:
    tp = TournamentParams(judge=judge, judge_settings=settings)
    return JudgeContext(Params(tournament=tp), stage="tournament", **tables)  # type: ignore[arg-type]


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
    from ragcourt.core.params import JudgeParams, JudgeSpec
    from ragcourt.judging.builders import build_judge
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
