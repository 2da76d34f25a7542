"""Answer-first QA generation with scripted writer and reader models: spans are typed and
located in their document, a pair is kept only when the reader's answer is the span, every
rejection has its check and reason, and a fixed seed gives the same tables twice."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from _llm_testing import Messages, scripted_model

from ragcourt.core.prompts import prompt
from ragcourt.core.schemas import check
from ragcourt.judging.lexical import normalize_answer as judging_normalize
from ragcourt.judging.lexical import token_f1 as judging_f1
from ragcourt.llm import Gateway
from ragcourt.orchestration.params import Params, parse_params
from ragcourt.qagen.answer_first import (
    AnswerFirstGenerator,
    DocumentInfo,
    display_title,
    span_contexts,
)
from ragcourt.qagen.answer_spans import Extractor, choose_spans, extract_spans
from ragcourt.qagen.roundtrip import (
    clean_phrase,
    longest_shared_run,
    normalize_answer,
    token_f1,
)
from ragcourt.qagen.stage import QAGenResult, generate_qa

ROOT = Path(__file__).resolve().parents[3]
PROMPTS = ROOT / "configs" / "prompts"
WRITER = prompt("qagen", "answer_first_question_system", "v2-lang", PROMPTS)
READER = prompt("qagen", "answer_first_reader_system", "v2-lang", PROMPTS)
CLOSED = prompt("qagen", "answer_first_closed_book_system", "v2-lang", PROMPTS)

DOC_PREFIX = "Port records. "
CHUNK = (
    "The harbour office of Valparaiso was opened in 1832. Its first director, Manuel Ortega, "
    "kept a green ledger in which every tea shipment was recorded with its weight and price."
)
DOC = DOC_PREFIX + CHUNK
QUESTIONS = {  # span -> the question a good writer asks for it
    "Valparaiso": "Where was a harbour office opened in 1832?",
    "1832": "In which year did the Valparaiso harbour office open?",
    "Manuel Ortega": "Who was the first director of the harbour office?",
}


def _answer_in(msgs: Messages) -> str:
    m = re.search(r"^Answer: (.+)$", msgs[-1]["content"], re.M)
    assert m is not None, msgs[-1]["content"]
    return m.group(1)


def _question_in(msgs: Messages) -> str:
    m = re.search(r"^Question: (.+)$", msgs[-1]["content"], re.M)
    assert m is not None, msgs[-1]["content"]
    return m.group(1)


def _good_reader(msgs: Messages) -> str:
    q = _question_in(msgs)
    return next(f"Answer: {span}." for span, asked in QUESTIONS.items() if asked == q)


def script(
    writer: Callable[[str], str] = QUESTIONS.__getitem__,
    reader: Callable[[Messages], str] = _good_reader,
    closed_book: str = "I do not know",
) -> Callable[[Messages], str]:
    """A model playing writer (``writer(span)``), reader and closed-book reader by system."""

    def reply(msgs: Messages) -> str:
        system = msgs[0]["content"]
        if system == WRITER:
            return writer(_answer_in(msgs))
        if system == READER:
            return reader(msgs)
        assert system == CLOSED
        return closed_book

    return reply


def _params(tmp: Path, model: str, **af: object) -> Params:
    data = {
        "llm": {"model": model, "cache_dir": str(tmp / "cache"), "max_retries": 0,
                "metrics_dir": str(tmp / "metrics")},
        "qagen": {"reference_chunking": "c256", "method": "answer_first", "n_items": 10,
                  "max_attempts": 10, "question_model": None, "answer_model": None,
                  "prompt_version": "v1", "filter_prompt_version": "v1",
                  "filter_kinds": {"answerability": "answerability"},
                  "thresholds": {"answerability": 0.5, "faithfulness": 0.9, "relevance": 0.9},
                  # the fixture's three spans, "Valparaiso" (a lone name) included
                  # the scripted model reads back (the trained reader: its own tests)
                  "answer_first": {"extractor": "rules", "spans_per_chunk": 3,
                                   "fill_lower_tiers": True, "round_trip": "llm", **af}},
    }  # fmt: skip
    return parse_params(data)


def _contexts() -> pl.DataFrame:
    start = len(DOC_PREFIX)
    return pl.DataFrame(
        {
            "source_chunk_id": ["c256-doc0-0"],
            "doc_id": ["doc0"],
            "char_start": [start],
            "char_end": [start + len(CHUNK)],
            "context": [CHUNK],
        }
    )


def _one_hot(texts: list[str]) -> np.ndarray:
    """Near-duplicate encoder stand-in: every question its own direction."""
    return np.eye(max(len(texts), 1), 64, dtype=np.float32)[: len(texts)]


def _generate(params: Params) -> QAGenResult:
    spans = span_contexts(_contexts(), params.qagen)
    gen = AnswerFirstGenerator(Gateway(params.llm, stage="qagen"), params, prompts_dir=PROMPTS)
    res = generate_qa(spans.frame, gen, _one_hot)
    check(res.qa, "qa", "<qa>")
    check(res.rejected, "qa_rejected", "<qa_rejected>")
    return res


# --- spans ----------------------------------------------------------------------------------


def test_rule_spans_are_typed_and_located() -> None:
    spans = extract_spans(CHUNK, "rules", max_words=5)
    assert [(s.text, s.answer_type) for s in spans] == [
        ("Valparaiso", "name"),
        ("1832", "date"),
        ("Manuel Ortega", "name"),
    ]
    for s in spans:
        assert CHUNK[s.start : s.end] == s.text
        assert s.text in CHUNK[s.sentence_start : s.sentence_end]


def test_choose_spans_diversifies_types_and_is_seeded() -> None:
    spans = extract_spans(CHUNK, "rules", max_words=5)
    two = choose_spans(spans, 2, [13, 1])
    assert {s.answer_type for s in two} == {"name", "date"}  # one per type before a second
    assert choose_spans(spans, 2, [13, 1]) == two
    assert len(choose_spans(spans, 10, [0], fill_lower_tiers=True)) == 3
    assert len(choose_spans(spans, 10, [0])) == 2  # "Valparaiso", a lone name, is tier 1


def test_squad_f1_matches_the_judging_normalisation() -> None:
    pairs = [("The Manuel Ortega.", "manuel ortega"), ("in 1832", "1832"), ("a, b; c", "B c d")]
    for a, b in pairs:
        assert normalize_answer(a) == judging_normalize(a)
        assert token_f1(a, b) == pytest.approx(judging_f1(a, b))
    assert clean_phrase('Answer: "Manuel Ortega".\nmore') == "Manuel Ortega"
    assert longest_shared_run("Who kept a green ledger?", CHUNK) == 4  # kept a green ledger


# --- generation -----------------------------------------------------------------------------


def test_pairs_whose_reader_finds_the_span_are_kept_with_their_record(tmp_path: Path) -> None:
    with scripted_model("af-good", script()) as m:
        res = _generate(_params(tmp_path, m.model))
    assert res.rejected.height == 0
    qa = res.qa.sort("answer_start")
    assert qa["reference_answers"].to_list() == [["Valparaiso"], ["1832"], ["Manuel Ortega"]]
    assert qa["question"].to_list() == list(QUESTIONS.values())
    for row in qa.iter_rows(named=True):
        assert DOC[row["answer_start"] : row["answer_end"]] == row["reference_answers"][0]
        assert row["roundtrip_f1"] == 1.0
        assert row["method"] == "answer_first"
        assert row["source_chunk_id"] == "c256-doc0-0"
        assert row["reference_answers"][0] in row["long_reference"]
    assert qa["answer_type"].to_list() == ["name", "date", "name"]
    assert res.summary.method == "answer_first"
    assert res.summary.answer_types == {
        "date": {"tried": 1, "accepted": 1},
        "name": {"tried": 2, "accepted": 2},
    }


def test_round_trip_rejects_a_question_whose_answer_is_not_the_span_scripted_reader(
    tmp_path: Path,
) -> None:
    def wrong_reader(msgs: Messages) -> str:
        return "a green ledger"  # answers every question with another phrase of the chunk

    with scripted_model("af-wrong-reader", script(reader=wrong_reader)) as m:
        res = _generate(_params(tmp_path, m.model))
    assert res.qa.height == 0
    assert res.rejected["failed_filter"].unique().to_list() == ["roundtrip_mismatch"]
    row = res.rejected.filter(pl.col("answer") == "1832").row(0, named=True)
    assert row["reader_answer"] == "a green ledger"
    assert row["roundtrip_f1"] == 0.0
    assert "not '1832'" in row["reason"]


def test_each_rejection_has_its_check_and_reason(tmp_path: Path) -> None:
    writes = {
        "Valparaiso": "What does the passage say about the harbour office?",
        "1832": "What happened in 1832?",
        "Manuel Ortega": "Who kept a green ledger in which every tea shipment was recorded?",
    }
    with scripted_model("af-bad-writer", script(writer=writes.__getitem__)) as m:
        res = _generate(_params(tmp_path, m.model, max_copied_words=6))
    got = dict(zip(res.rejected["answer"], res.rejected["failed_filter"], strict=True))
    assert got == {
        "Valparaiso": "question_not_standalone",
        "1832": "question_contains_answer",
        "Manuel Ortega": "question_copies_context",
    }
    reason = res.rejected.filter(pl.col("answer") == "Manuel Ortega")["reason"][0]
    assert "run of 11 words" in reason
    assert res.summary.rejections == {
        "question_contains_answer": 1,
        "question_copies_context": 1,
        "question_not_standalone": 1,
    }


def test_closed_book_check_rejects_what_the_reader_knows_without_the_chunk(
    tmp_path: Path,
) -> None:
    with scripted_model("af-closed", script(closed_book="1832")) as m:
        res = _generate(_params(tmp_path, m.model, closed_book_check=True, writer_tries=1))
        calls = len(m.calls)
    assert res.rejected["failed_filter"].to_list() == ["answerable_closed_book"]
    assert res.rejected["closed_book_answer"].to_list() == ["1832"]
    assert res.qa.height == 2
    assert calls == 9  # three writers, three readers, three closed-book readers


def test_prompts_put_the_chunk_first_and_tag_it(tmp_path: Path) -> None:
    with scripted_model("af-prefix", script()) as m:
        _generate(_params(tmp_path, m.model, writer_tries=1))
    users = [msgs[-1]["content"] for msgs in m.calls if msgs[0]["content"] in (WRITER, READER)]
    assert len(users) == 6
    assert all(u.startswith('<text id="') and CHUNK in u.split("</text>")[0] for u in users)


def test_same_seed_same_tables(tmp_path: Path) -> None:
    with scripted_model("af-seed", script()) as m:
        one = _generate(_params(tmp_path / "a", m.model, spans_per_chunk=2))
        two = _generate(_params(tmp_path / "b", m.model, spans_per_chunk=2))
    assert one.qa.equals(two.qa)
    assert one.rejected.equals(two.rejected)
    assert one.summary == two.summary


def test_a_question_failing_the_lexical_checks_is_written_again_scripted_writer(
    tmp_path: Path,
) -> None:
    tries: dict[str, int] = {}

    def second_try_good(span: str) -> str:
        tries[span] = tries.get(span, 0) + 1
        return QUESTIONS[span] if tries[span] > 1 else f"Is the answer {span}?"

    with scripted_model("af-retry", script(writer=second_try_good)) as m:
        once = _generate(_params(tmp_path / "one", m.model, writer_tries=1))
    assert once.qa.height == 0
    assert set(once.rejected["failed_filter"]) == {"question_contains_answer"}
    tries.clear()
    with scripted_model("af-retry2", script(writer=second_try_good)) as m:
        twice = _generate(_params(tmp_path / "two", m.model, writer_tries=2))
    assert twice.rejected.height == 0
    assert sorted(twice.qa["question"]) == sorted(QUESTIONS.values())
    assert tries == dict.fromkeys(QUESTIONS, 2)


def test_the_last_failure_of_every_try_is_kept_scripted_writer(tmp_path: Path) -> None:
    with scripted_model("af-retry-bad", script(writer=lambda span: f"Why {span}?")) as m:
        res = _generate(_params(tmp_path, m.model, writer_tries=3))
        writer_calls = sum(msgs[0]["content"] == WRITER for msgs in m.calls)
    assert writer_calls == 9  # three spans, three tries each
    assert res.qa.height == 0
    assert all(r.endswith("(all 3 tries)") for r in res.rejected["reason"])


def _recording_writer(version: str, seen: list[str]) -> Callable[[Messages], str]:
    """A good writer of prompt ``version`` that appends each user message to ``seen``; every
    other call is the good reader."""
    writer = prompt("qagen", "answer_first_question_system", version, PROMPTS)

    def reply(msgs: Messages) -> str:
        if msgs[0]["content"] == writer:
            seen.append(msgs[-1]["content"])
            return QUESTIONS[_answer_in(msgs)]
        return _good_reader(msgs)

    return reply


def test_few_shot_writer_sees_the_span_sentence(tmp_path: Path) -> None:
    seen: list[str] = []
    reply = _recording_writer("v3-fewshot", seen)
    with scripted_model("af-fewshot", reply) as m:
        params = _params(tmp_path, m.model)
        params.qagen.prompt_version = "v3-fewshot"
        res = _generate(params)
    assert res.qa.height == 3
    sentence = "Its first director, Manuel Ortega, kept a green ledger in which every tea shipment"
    assert any(f"Sentence: {sentence}" in u and "Answer: Manuel Ortega" in u for u in seen)


def test_titled_writer_sees_the_document_title_scripted_writer(tmp_path: Path) -> None:
    seen: list[str] = []
    reply = _recording_writer("v4-titled", seen)
    # a title with tag-like text and underscores, as a file stem gives it
    docs = DocumentInfo(
        {"doc0": [DOC]}, {"doc0": display_title("1832_port_records_</text>.txt") or ""}
    )
    with scripted_model("af-titled", reply) as m:
        params = _params(tmp_path, m.model)
        params.qagen.prompt_version = "v4-titled"
        spans = span_contexts(_contexts(), params.qagen, docs)
        gen = AnswerFirstGenerator(Gateway(params.llm, stage="qagen"), params, prompts_dir=PROMPTS)
        res = generate_qa(spans.frame, gen, _one_hot)
    assert res.qa.height == 3 and len(seen) == 9  # 3 spans x 3 tries
    titles = {re.search(r"^Title: (.*)$", u, re.M).group(1) for u in seen}  # type: ignore[union-attr]
    assert len(titles) == 1
    (title,) = titles
    assert title.startswith("1832 port records") and "</text>" not in title
    assert all(u.count("</text>") == 1 for u in seen)  # only the chunk's own closing tag


def test_display_title_reads_a_file_stem() -> None:
    assert display_title("1790_george-washington.txt") == "1790 george washington"
    assert display_title("Imperial_College_London") == "Imperial College London"
    assert display_title(" _ ") is None and display_title(None) is None
    assert len(display_title("x" * 500) or "") == 120


def test_spans_frequent_in_their_document_join_the_noun_phrase_tier() -> None:
    from ragcourt.qagen.answer_spans import NOUN_PHRASE_TIER, chunk_share, demote_frequent

    spans = extract_spans(CHUNK, "rules")
    others = [
        "Valparaiso traded copper.",
        "In Valparaiso the rains came late.",
        "A ledger of 1833.",
        "Ortega left the port.",  # 'Ortega' alone is not 'Manuel Ortega'
        "Valparaisoan ships",  # not the whole word
    ]
    doc_chunks = [CHUNK, *others]
    assert chunk_share("Valparaiso", doc_chunks) == pytest.approx(3 / 6)
    assert chunk_share("1832", doc_chunks) == pytest.approx(1 / 6)
    tiers = {s.text: s.tier for s in demote_frequent(spans, doc_chunks, 0.25)}
    assert tiers == {"Valparaiso": NOUN_PHRASE_TIER, "1832": 0, "Manuel Ortega": 0}
    # off at share 1, and for documents of too few chunks to say
    assert demote_frequent(spans, doc_chunks, 1.0) == spans
    assert demote_frequent(spans, doc_chunks[:3], 0.25) == spans


def test_stage_documents_give_titles_and_chunk_texts() -> None:
    chunks = pl.DataFrame({"doc_id": ["d1", "d1", "d2"], "text": ["a", "b", "c"]})
    documents = pl.DataFrame({"doc_id": ["d1", "d2"], "title": ["sotu_1790", None]})
    info = DocumentInfo.of(chunks, documents)
    assert info.chunk_texts == {"d1": ["a", "b"], "d2": ["c"]}
    assert info.titles == {"d1": "sotu 1790"}


def test_spans_are_drawn_tier_by_tier() -> None:
    from ragcourt.qagen.answer_spans import AnswerSpan

    spans = [
        AnswerSpan("green ledger", 0, 12, "noun_phrase", 0, 40, tier=2),
        AnswerSpan("tea shipment", 13, 25, "noun_phrase", 0, 40, tier=2),
        AnswerSpan("Chilean", 31, 38, "organization", 0, 40, tier=1),
        AnswerSpan("1832", 26, 30, "date", 0, 40, tier=0),
    ]
    for seed in range(5):
        # the chunk's best tier only, however many places are left
        assert [s.text for s in choose_spans(spans, 3, [seed])] == ["1832"]
        # lower tiers fill the places, tier by tier
        fill = [s.text for s in choose_spans(spans, 2, [seed], fill_lower_tiers=True)]
        assert fill == ["1832", "Chilean"]
        three = {s.text for s in choose_spans(spans, 3, [seed], fill_lower_tiers=True)}
        assert {"1832", "Chilean"} < three
    lone_names = [sp for sp in spans if sp.tier > 0]
    assert [s.text for s in choose_spans(lone_names, 1, [0])] == ["Chilean"]


def test_span_tiers_follow_what_squad_annotators_ask_for() -> None:
    from ragcourt.qagen.answer_spans import spacy_model_dir, span_tier

    assert span_tier("PERSON", 2) == 0 and span_tier("DATE", 1) == 0  # "Manuel Ortega", "1832"
    assert span_tier("NORP", 1) == 1 and span_tier("GPE", 1) == 1  # "Chilean", "America"
    assert span_tier("GPE", 2) == 0 and span_tier("SOMETHING_NEW", 2) == 1
    rules = {s.text: s.tier for s in extract_spans(CHUNK, "rules")}
    assert rules["Manuel Ortega"] == 0 and rules["1832"] == 0 and rules["Valparaiso"] == 1
    if spacy_model_dir() is None:
        pytest.skip("the spacy-en extra is not installed")
    found = {s.text: s for s in extract_spans(CHUNK, "spacy")}
    assert found["Manuel Ortega"].tier == 0 and found["1832"].tier == 0
    assert all(s.tier == 2 for s in found.values() if s.answer_type == "noun_phrase")


def test_spacy_list_members_drop_one_tier() -> None:
    from ragcourt.qagen.answer_spans import NOUN_PHRASE_TIER, spacy_model_dir

    if spacy_model_dir() is None:
        pytest.skip("the spacy-en extra is not installed")
    text = (
        "Manuel Ortega sailed to Lima in 1832. America is working with Russia and China and "
        "India on trade."
    )
    found = {s.text: s for s in extract_spans(text, "spacy")}
    assert not found["Manuel Ortega"].in_list and found["Manuel Ortega"].tier == 0
    for name in ("Russia", "China", "India"):
        assert found[name].in_list and found[name].tier == NOUN_PHRASE_TIER, found[name]
    assert not found["America"].in_list


def test_a_year_keeps_its_era_marker() -> None:
    from ragcourt.qagen.answer_spans import spacy_model_dir

    text = "In 207 BC the Senate met. By AD 70 the temple had fallen; in 1999 it was a ruin."
    kinds: list[Extractor] = ["rules"]
    if spacy_model_dir() is not None:
        kinds.append("spacy")
    for kind in kinds:
        dates = [s.text for s in extract_spans(text, kind) if s.answer_type == "date"]
        assert dates == ["207 BC", "AD 70", "1999"], kind
        assert all(s.text not in ("BC", "AD", "207", "70") for s in extract_spans(text, kind))


def test_spacy_spans_drop_dates_and_ordinals_that_name_no_fact() -> None:
    from ragcourt.qagen.answer_spans import spacy_model_dir

    if spacy_model_dir() is None:
        pytest.skip("the spacy-en extra is not installed")
    text = "The annual fair opened on 3 May 1999. For centuries it was the second largest."
    got = {s.text for s in extract_spans(text, "spacy") if s.answer_type in ("date", "number")}
    assert got == {"3 May 1999"}


def test_every_passing_try_is_read_back_and_the_first_round_trip_kept_scripted_model(
    tmp_path: Path,
) -> None:
    """Try 0 passes the lexical checks but the reader answers it with another phrase; try 1
    round-trips. Reading back every try keeps try 1; reading back only the first rejects."""
    vague = {span: f"What did the harbour office keep ({i})?" for i, span in
             enumerate(QUESTIONS)}  # fmt: skip
    tries: dict[str, int] = {}

    def writer(span: str) -> str:
        tries[span] = tries.get(span, 0) + 1
        return vague[span] if tries[span] % 2 == 1 else QUESTIONS[span]

    def reader(msgs: Messages) -> str:
        q = _question_in(msgs)
        if q in vague.values():
            return "Answer: a green ledger."
        return _good_reader(msgs)

    def in_order(params: Params) -> Params:
        """One call at a time, so the writer sees a span's tries in order (try 0 first): the
        tries of one span go out in one batch, concurrently by default."""
        return params.model_copy(update={"llm": params.llm.model_copy(update={"concurrency": 1})})

    with scripted_model("af-first-only", script(writer=writer, reader=reader)) as m:
        first = _generate(
            in_order(
                _params(tmp_path / "first", m.model, writer_tries=2, read_back_every_try=False)
            )
        )
        first_reads = sum(msgs[0]["content"] == READER for msgs in m.calls)
    assert first.qa.height == 0 and first_reads == 3
    assert set(first.rejected["failed_filter"]) == {"roundtrip_mismatch"}
    assert all("a green ledger" in r and "best of" not in r for r in first.rejected["reason"])

    tries.clear()
    with scripted_model("af-every", script(writer=writer, reader=reader)) as m:
        every = _generate(in_order(_params(tmp_path / "every", m.model, writer_tries=2)))
        every_reads = sum(msgs[0]["content"] == READER for msgs in m.calls)
    assert every_reads == 6  # two passing tries per span, both read back in one batch
    assert every.rejected.height == 0
    assert sorted(every.qa["question"]) == sorted(QUESTIONS.values())
    assert set(every.qa["roundtrip_f1"]) == {1.0}


def test_a_span_no_try_round_trips_fails_with_its_best_reading_scripted_model(
    tmp_path: Path,
) -> None:
    near = "the office of Valparaiso in 1832 opened"  # F1 2/7 with "Valparaiso" and "1832"

    def reader(msgs: Messages) -> str:
        return f"Answer: {near}" if "(1)" in _question_in(msgs) else "Answer: green ledger"

    seen: dict[str, int] = {}

    def writer(span: str) -> str:
        seen[span] = seen.get(span, 0) + 1
        return f"Which detail of the shipping records matters ({seen[span] - 1})?"

    with scripted_model("af-best", script(writer=writer, reader=reader)) as m:
        res = _generate(_params(tmp_path, m.model, writer_tries=2, roundtrip_f1=0.5))
    assert res.qa.height == 0
    assert set(res.rejected["failed_filter"]) == {"roundtrip_mismatch"}
    assert all(r.endswith("(best of 2 questions)") for r in res.rejected["reason"])
    row = res.rejected.filter(pl.col("answer") == "Valparaiso").row(0, named=True)
    assert row["question"] == "Which detail of the shipping records matters (1)?"
    assert f"answered '{near}'" in row["reason"] and "token F1 0.29 < 0.5" in row["reason"]


def test_numbers_must_agree_in_the_round_trip_scripted_reader(tmp_path: Path) -> None:
    from ragcourt.qagen.roundtrip import numbers_agree

    assert numbers_agree("the next 5 years", "next 5 years")
    assert numbers_agree("3,000,000 dollars", "3,000,000") and numbers_agree("Paris", "Ortega")
    assert not numbers_agree("next 5 years", "next 10 years")  # token F1 0.67
    assert not numbers_agree("207 BC", "BC")

    def reader(msgs: Messages) -> str:
        q = _question_in(msgs)
        return "Answer: 1832 and 1833" if q == QUESTIONS["1832"] else _good_reader(msgs)

    with scripted_model("af-numbers", script(reader=reader)) as m:
        res = _generate(_params(tmp_path, m.model, writer_tries=1, roundtrip_f1=0.5))
    assert sorted(res.qa["reference_answers"].list.first()) == ["Manuel Ortega", "Valparaiso"]
    [row] = res.rejected.iter_rows(named=True)
    assert row["failed_filter"] == "roundtrip_mismatch"  # token F1 0.5 passes the threshold
    assert row["reason"] == "the reader answered '1832 and 1833', not '1832' (its numbers differ)"


def test_spans_drop_a_final_possessive() -> None:
    text = "In 1995 the field began with Rosalind Picard's paper on North Carolina’s coast."
    for extractor in ("rules", "spacy"):
        from ragcourt.qagen.answer_spans import spacy_model_dir

        if extractor == "spacy" and spacy_model_dir() is None:
            continue
        got = {s.text for s in extract_spans(text, extractor)}
        assert "Rosalind Picard" in got, (extractor, got)
        assert not any(t.endswith(("'s", "’s")) for t in got), (extractor, got)


def test_the_default_threshold_rejects_a_shared_generic_head() -> None:
    from ragcourt.qagen.params import AnswerFirstParams

    shared_head = token_f1("Mornington Peninsula National Park", "Organ Pipes National Park")
    assert shared_head == pytest.approx(0.5)
    assert shared_head < AnswerFirstParams().roundtrip_f1 <= token_f1("65%", "approximately 65%")


# --- the trained reader's round trip (real model; only the writer is scripted) -------------


def test_trained_reader_round_trip_keeps_good_questions_without_llm_reads(tmp_path: Path) -> None:
    with scripted_model("af-trained-good", script()) as m:
        res = _generate(_params(tmp_path, m.model, round_trip="reader", writer_tries=1))
        systems = [msgs[0]["content"] for msgs in m.calls]
    assert READER not in systems  # no LLM read-back: the reader model read every question
    assert res.qa.height >= 2
    for row in res.qa.iter_rows(named=True):
        assert row["roundtrip_f1"] >= 0.6


def test_trained_reader_round_trip_rejects_an_entity_swapped_question(tmp_path: Path) -> None:
    writes = {  # two assert what the chunk does not state (year, city and role swapped)
        "Valparaiso": "Where was a harbour office opened in 1901?",
        "1832": QUESTIONS["1832"],
        "Manuel Ortega": "Who was the last director of the harbour office of Santiago?",
    }
    with scripted_model("af-trained-swap", script(writer=writes.__getitem__)) as m:
        res = _generate(_params(tmp_path, m.model, round_trip="reader", writer_tries=1))
    assert res.qa["reference_answers"].to_list() == [["1832"]]
    assert set(res.rejected["failed_filter"]) == {"roundtrip_mismatch"}
    assert sorted(res.rejected["answer"]) == ["Manuel Ortega", "Valparaiso"]
    assert all("trained reader" in r for r in res.rejected["reason"])


@pytest.mark.xfail(
    strict=True,
    reason="known limit of the CPU-recipe reader: a city swapped into a question whose span "
    "is a year still reads back (docs/results/reader.md)",
)
def test_trained_reader_round_trip_rejects_a_swapped_city(tmp_path: Path) -> None:
    writes = {**QUESTIONS, "1832": "In which year did the Lima harbour office open?"}
    with scripted_model("af-trained-city", script(writer=writes.__getitem__)) as m:
        res = _generate(_params(tmp_path, m.model, round_trip="reader", writer_tries=1))
    assert "1832" not in [a for refs in res.qa["reference_answers"].to_list() for a in refs]


def test_reads_back_needs_the_f1_threshold_and_agreeing_numbers() -> None:
    from ragcourt.qagen.roundtrip import reads_back

    assert reads_back("Manuel Ortega", "Manuel Ortega", 0.5) == (True, 1.0)
    assert reads_back("the Valparaiso", "Valparaiso", 0.5) == (True, 1.0)  # articles dropped
    assert reads_back("port of Valparaiso", "Valparaiso", 0.5) == (True, 0.5)  # F1 at the bar
    assert reads_back("Ortega and his crew", "Manuel Ortega", 0.5)[0] is False  # F1 0.4
    match, f1 = reads_back("next 5 years", "next 10 years", 0.5)
    assert not match and f1 > 0.5  # the F1 passes; the numbers do not
