"""QA quality gate: each rule on hand-written cases, and as registered filters."""

from __future__ import annotations

from ragcourt.core.prompts import prompt
from ragcourt.qagen.filter_registry import QA_FILTERS, JudgeSettings, QAItem
from ragcourt.qagen.generator import clean_question
from ragcourt.qagen.quality import GATE, GateRejection, gate_rejection, question_quality_reason

ZH = (
    "美国政府周三宣布，将进口钢铁和铝制品的关税从百分之二十五提高到百分之五十，"
    "新税率自下月一日起生效。"
)
EN = (
    "The Deutsche harbour office weighed every crate of iron twice before the ships left for "
    "Lisbon in the spring of 1850, and the tea shipment arrived in May."
)
PROMPTS = [prompt("qagen", "question_user", "v1"), prompt("qagen", "question_system", "v1")]


def _gate(q: str, a: str, ctx: str = EN) -> GateRejection | None:
    return gate_rejection(q, a, ctx, PROMPTS)


def test_good_items_pass_in_english_and_chinese() -> None:
    assert _gate("When did the tea shipment arrive?", "The tea shipment arrived in May.") is None
    assert _gate("钢铁和铝制品的关税提高到多少？", "关税提高到百分之五十。", ZH) is None


def test_repeated_phrase_question_is_degenerate() -> None:
    q = "What is " + "AI-powered " * 20 + "iron?"
    r = _gate(q, "Iron was weighed twice.")
    assert r is not None and r.filter == "degenerate" and "repetition loop" in r.reason


def test_repeated_characters_in_a_chinese_answer_are_degenerate() -> None:
    r = _gate("钢铁和铝制品的关税提高到多少？", "关税提高" * 6, ZH)
    assert r is not None and r.filter == "degenerate"


def test_english_question_about_a_chinese_chunk_is_rejected_for_language() -> None:
    r = _gate("What tariff rate did the government announce for steel?", "百分之五十", ZH)
    assert r is not None and r.filter == "question_language"


def test_question_in_another_latin_language_is_rejected_for_language() -> None:
    r = _gate("Wann ist die Teelieferung im Hafen angekommen?", "Im Mai.", EN)
    assert r is not None and r.filter == "question_language"


def test_meta_and_nested_questions_are_rejected() -> None:
    for q in (
        "What is the actual text of the article?",
        'What is the answer to the question: "What is the answer to the question: '
        "What is the answer to the question: when did the ships leave?",
        "这篇文章主要讲了什么？",
    ):
        r = _gate(q, "The ships left in the spring of 1850.", ZH if "文章" in q else EN)
        assert r is not None and r.filter == "question_quality", q


def test_too_short_question_is_not_specific() -> None:
    r = _gate("Iron?", "Iron was weighed twice.")
    assert r is not None and r.filter == "question_quality"


def test_echo_of_the_writer_prompt_is_degenerate() -> None:
    q = "Write one question that a reader could answer about the iron crates?"
    r = _gate(q, "Iron was weighed twice.")
    assert r is not None and r.filter == "degenerate" and "echoes the prompt" in r.reason


def test_answer_not_supported_by_its_span_is_rejected() -> None:
    r = _gate("When did the tea shipment arrive?", "Quantum computers use superconducting qubits.")
    assert r is not None and r.filter == "answer_support"


def test_gate_rules_are_registered_filters_with_reasons() -> None:
    cfg = JudgeSettings(model="rule")
    items = [
        QAItem("When did the tea shipment arrive?", "The tea shipment arrived in May.", EN),
        QAItem("What is the actual text of the article?", "It is about iron.", EN),
    ]
    for name in GATE:
        assert name in QA_FILTERS
    out = QA_FILTERS.get("question_quality", "test")(None, items, cfg)  # type: ignore[arg-type]
    assert [o.passes(1.0) for o in out] == [True, False]
    assert out[1].judge == "question_quality" and "the article" in (out[1].reason or "")


def test_echo_check_reads_the_writer_prompts_not_the_filter_version() -> None:
    """The demo's settings: filters at v2 (qagen_filters.yaml), writers at v2-lang
    (qagen.yaml, which has no v2); the echo check must read the writer's version."""
    cfg = JudgeSettings(model="rule", prompt_version="v2", writer_prompt_version="v2-lang")
    echo = "Write one question in English that a reader could answer with a fact from this text."
    items = [QAItem(echo, "It is about iron.", EN)]
    out = QA_FILTERS.get("degenerate", "test")(None, items, cfg)  # type: ignore[arg-type]
    assert out[0].passes(1.0) is False and out[0].judge == "degenerate"


def test_a_statement_copied_from_the_chunk_is_not_a_question() -> None:
    """The 1.5B writer copied chunk sentences as 'questions' (benchmarks/question_language.py)."""
    zh = "长江中游多地水位超过警戒线，湖北和湖南两省启动防汛四级应急响应。"
    reason = question_quality_reason(zh)
    assert reason is not None and reason.startswith("not a question")
    assert question_quality_reason("The harbour office opened in 1852.") is not None
    assert question_quality_reason("马拉松比赛吸引了多少名跑者？") is None
    assert question_quality_reason("Wie viele Bäume in Deutschland sind geschädigt?") is None


def test_a_full_width_question_mark_ends_the_question() -> None:
    assert (
        clean_question("新高铁线路的全程距离是多少公里？答案：一千公里")
        == "新高铁线路的全程距离是多少公里？"
    )
