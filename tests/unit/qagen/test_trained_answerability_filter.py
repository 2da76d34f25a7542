"""The QA filter kind ``trained_answerability`` (the shipped trained judge, no LLM): selected for
the answerability role by ``qagen.filter_kinds``, it scores a question against the chunk that
holds its answer above the same chunk with that sentence cut out, and calls no model."""

from __future__ import annotations

from typing import cast

import pytest

from ragcourt.core.errors import ConfigError
from ragcourt.llm.gateway import Gateway
from ragcourt.orchestration.params import parse_params
from ragcourt.qagen.filter_registry import QA_FILTERS, JudgeSettings, QAItem
from ragcourt.qagen.generator import Generator
from ragcourt.qagen.trained_filter import TRAINED_ANSWERABILITY

CHUNK = (
    "The first railway between Santiago and Valparaiso opened in 1863. Engineers cut eleven "
    "tunnels through the coastal mountains for the line."
)
CUT = "The first railway between Santiago and Valparaiso opened in 1863."


class NoGateway:
    """Fails the test if a filter reaches for a model."""

    def __getattr__(self, name: str) -> object:
        raise AssertionError(f"the trained filter called the gateway ({name})")


def test_trained_answerability_needs_no_model_and_reads_the_chunk() -> None:
    q = "How many tunnels did the engineers cut through the coastal mountains?"
    flt = QA_FILTERS.get(TRAINED_ANSWERABILITY, "qagen")
    out = flt(
        cast(Gateway, NoGateway()),
        [QAItem(q, "eleven", CHUNK), QAItem(q, "eleven", CUT)],
        JudgeSettings(model="unused"),
    )
    assert [o.judge for o in out] == ["answerability", "answerability"]
    assert all(o.ok and o.form == "probability" for o in out)
    assert out[0].score is not None and out[1].score is not None
    assert out[0].score > out[1].score


def test_filter_kinds_choose_the_answerability_filter() -> None:
    params = parse_params({"qagen": {"filter_kinds": {"answerability": TRAINED_ANSWERABILITY}}})
    gen = Generator(cast(Gateway, NoGateway()), params)
    assert gen.filters["answerability"] is QA_FILTERS.get(TRAINED_ANSWERABILITY, "qagen")
    assert gen.filters["faithfulness"] is QA_FILTERS.get("faithfulness", "qagen")


def test_unknown_filter_kind_is_one_line() -> None:
    params = parse_params({"qagen": {"filter_kinds": {"answerability": "nope"}}})
    with pytest.raises(ConfigError) as err:
        Generator(cast(Gateway, NoGateway()), params)
    assert "\n" not in str(err.value) and "nope" in str(err.value)
