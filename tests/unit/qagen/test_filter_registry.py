"""QA filters are resolved through ``QA_FILTERS`` (ragcourt.core.registry.Registry): the three
built-in judges are registered under their names, each sends exactly the requests of its
``judge_*`` function, and the generator dispatches by name through the registry."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import pytest
from pydantic import BaseModel

from ragcourt.core.errors import ConfigError
from ragcourt.llm.gateway import Gateway
from ragcourt.llm.types import ChatRequest, StructuredResult
from ragcourt.orchestration.params import parse_params
from ragcourt.qagen.filter_registry import (
    FILTER_ROLES,
    QA_FILTERS,
    JudgeOutcome,
    JudgeSettings,
    QAItem,
    role_kinds,
)
from ragcourt.qagen.filters import (
    BinaryVerdict,
    ScoreVerdict,
    answerability_filter,
    judge_answerability,
    judge_faithfulness,
    judge_relevance,
)
from ragcourt.qagen.generator import Candidate, Generator

ROOT = Path(__file__).resolve().parents[3]
CFG = JudgeSettings(model="scripted/j", prompts_dir=ROOT / "configs" / "prompts")
ITEMS = [
    QAItem("QUESTION-ONE?", "ANSWER-ONE", "CONTEXT-ONE"),
    QAItem("QUESTION-TWO?", "ANSWER-TWO", "CONTEXT-TWO"),
]


class FakeGateway:
    """Records every structured call; replies with a fixed score."""

    def __init__(self, score: float = 1) -> None:
        self.calls: list[tuple[list[ChatRequest], type[BaseModel], str]] = []
        self.score = score

    def structured(
        self, reqs: Sequence[ChatRequest], model: type[BaseModel], desc: str = ""
    ) -> list[StructuredResult[Any]]:
        self.calls.append((list(reqs), model, desc))
        value = model.model_validate({"reason": "because", "score": self.score})
        return [StructuredResult(ok=True, value=value, raw="{}") for _ in reqs]


def as_gateway(fake: FakeGateway) -> Gateway:
    """The fake where the filters expect a Gateway: it has the one method they call
    (``structured``)."""
    return cast(Gateway, fake)


def test_builtin_filters_are_registered_in_run_order() -> None:
    assert FILTER_ROLES == ("answerability", "faithfulness", "relevance")
    assert set(FILTER_ROLES) <= set(QA_FILTERS.kinds())
    assert QA_FILTERS.get("answerability", "qagen") is answerability_filter


@pytest.mark.parametrize(
    ("kind", "direct", "shown", "hidden", "schema"),
    [
        ("answerability", lambda gw: judge_answerability(
            gw, [i.question for i in ITEMS], [i.context for i in ITEMS], CFG, "d"),
         ("QUESTION", "CONTEXT"), "ANSWER", BinaryVerdict),
        ("faithfulness", lambda gw: judge_faithfulness(
            gw, [i.answer for i in ITEMS], [i.context for i in ITEMS], CFG, "d"),
         ("ANSWER", "CONTEXT"), "QUESTION", ScoreVerdict),
        ("relevance", lambda gw: judge_relevance(
            gw, [i.question for i in ITEMS], [i.answer for i in ITEMS], CFG, "d"),
         ("QUESTION", "ANSWER"), "CONTEXT", ScoreVerdict),
    ],
)  # fmt: skip
def test_registered_filter_sends_the_judge_functions_requests(
    kind: str, direct: Any, shown: tuple[str, str], hidden: str, schema: type[BaseModel]
) -> None:
    via_registry, via_function = FakeGateway(), FakeGateway()
    outcomes = QA_FILTERS.get(kind, "qagen")(as_gateway(via_registry), ITEMS, CFG, "d")
    assert outcomes == direct(via_function)
    assert via_registry.calls == via_function.calls
    (reqs, used_schema, desc), = via_registry.calls  # fmt: skip
    assert used_schema is schema and desc == "d"
    for req, suffix in zip(reqs, ("ONE", "TWO"), strict=True):
        user = req.messages[-1][1]
        assert all(f"{field}-{suffix}" in user for field in shown)
        assert hidden not in user
        assert req.tag == f"qagen.{kind}" and req.model == "scripted/j"
    assert [o.judge for o in outcomes] == [kind, kind]
    assert QA_FILTERS.get(kind, "qagen")(as_gateway(via_registry), [], CFG) == []


def test_taken_or_unknown_kinds_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="QA filter kind 'relevance' is already registered"):
        QA_FILTERS.register("relevance")(answerability_filter)
    with pytest.raises(ConfigError, match=r"qagen: unknown QA filter 'nope' \(registered: "):
        QA_FILTERS.get("nope", "qagen")


def test_generator_dispatches_by_name_through_the_registry() -> None:
    # the prompted JSON filters (v1) in every role; params.yaml has the trained answerability
    # judge and the one-token v2 filters
    qagen = {
        "filter_kinds": {"answerability": "answerability"},
        "filter_prompt_version": "v1",
        "thresholds": {"answerability": 0.5, "faithfulness": 0.9, "relevance": 0.9},
    }
    params = parse_params({"qagen": qagen})
    gw = FakeGateway(score=1)
    gen = Generator(as_gateway(gw), params)
    assert gen.filters == {k: QA_FILTERS.get(k, "qagen") for k in FILTER_ROLES}
    seen: list[list[QAItem]] = []

    def harsh(
        gw: Gateway, items: Sequence[QAItem], cfg: JudgeSettings, desc: str | None = None
    ) -> list[JudgeOutcome]:
        seen.append(list(items))
        return [JudgeOutcome("faithfulness", 0.0, "made up", model=cfg.model) for _ in items]

    gen.filters["faithfulness"] = harsh
    c = Candidate(0, "chunk-0", "d0", 0, 5, "CONTEXT", question="Q?", answer="A")
    gen.judge([c])
    assert seen == [[QAItem("Q?", "A", "CONTEXT")]]
    assert c.failed_filter == "faithfulness"
    assert c.reason == "score 0 < 0.9: made up"
    assert "relevance" not in c.outcomes  # short-circuit: the later judge did not run


FILTER_PLUGIN = """
from pydantic import BaseModel, Field

from ragcourt.qagen.filter_registry import QA_FILTERS, JudgeOutcome


class WordsSettings(BaseModel, extra="forbid"):
    min_words: int = Field(default=3, ge=1, description="fewest words an answer may have")


@QA_FILTERS.register("answer_words_for_test", config=WordsSettings)
def answer_words(gw, items, cfg, desc=None):
    s = cfg.settings
    return [
        JudgeOutcome("relevance", float(len(i.answer.split()) >= s.min_words), "words", model="-")
        for i in items
    ]
"""


def test_a_qa_filter_with_its_own_setting_is_one_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from _plugins import load_plugin
    from typer.testing import CliRunner

    from ragcourt.cli.main import app

    load_plugin(FILTER_PLUGIN, "answer_words_for_test", QA_FILTERS, tmp_path, monkeypatch)
    qagen: dict[str, Any] = {
        "filter_kinds": {"answerability": "answerability", "relevance": "answer_words_for_test"},
        "filter_prompt_version": "v1",
        "filter_settings": {"answer_words_for_test": {"min_words": 2}},
    }
    gen = Generator(as_gateway(FakeGateway(score=1)), parse_params({"qagen": qagen}))
    short = Candidate(0, "chunk-0", "d0", 0, 5, "CONTEXT", question="Q?", answer="A")
    longer = Candidate(1, "chunk-0", "d0", 0, 5, "CONTEXT", question="Q?", answer="A B")
    gen.judge([short, longer])
    assert short.failed_filter == "relevance" and longer.alive
    qagen["filter_settings"] = {"answer_words_for_test": {"min_words": 0}}
    with pytest.raises(ConfigError, match=r"^qagen\.filter_settings\.answer_words_for_test\.min_"):
        Generator(as_gateway(FakeGateway()), parse_params({"qagen": qagen}))
    qagen["filter_settings"] = {"faithfulness": {"min_words": 2}}
    with pytest.raises(ConfigError, match=r"QA filter 'faithfulness' takes no settings"):
        Generator(as_gateway(FakeGateway()), parse_params({"qagen": qagen}))
    qagen["filter_settings"] = {"nope": {}}
    with pytest.raises(ConfigError, match=r"^qagen\.filter_settings\.nope: unknown QA filter"):
        Generator(as_gateway(FakeGateway()), parse_params({"qagen": qagen}))
    out = CliRunner().invoke(app, ["kinds", "qa_filter"], terminal_width=200)
    assert (
        out.exit_code == 0 and "answer_words_for_test" in out.output and "min_words" in out.output
    )


def test_a_null_role_plays_the_kind_registered_as_its_default() -> None:
    nulls = parse_params({}).qagen.filter_kinds
    assert (nulls.answerability, nulls.faithfulness, nulls.relevance) == (None, None, None)
    assert role_kinds(nulls) == {r: QA_FILTERS.default(r) for r in FILTER_ROLES}
    assert role_kinds(nulls)["faithfulness"] == "faithfulness"
    chosen = parse_params({"qagen": {"filter_kinds": {"answerability": "answerability"}}})
    assert role_kinds(chosen.qagen.filter_kinds)["answerability"] == "answerability"
    bad = parse_params({"qagen": {"filter_kinds": {"relevance": "nope"}}})
    with pytest.raises(ConfigError, match=r"^qagen\.filter_kinds\.relevance: unknown QA filter"):
        role_kinds(bad.qagen.filter_kinds)
