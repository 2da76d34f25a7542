"""The reader's training data and input windows: edited questions assert what the paragraph does
not state, negatives never hold the answer, windows map tokens back to characters, and pair
scoring turns bad lines into error rows."""

from __future__ import annotations

import random

import pytest

from ragcourt.retrieval.pair_scoring import parse_lines
from ragcourt.retrieval.reader.examples import (
    ECHO_FORMS,
    ECHO_LEAD_INS,
    ExampleBuilder,
    echo_text,
    vary_echo,
    without_answer,
)
from ragcourt.retrieval.reader.question_edits import negate, swap_antonym, swap_entity
from ragcourt.retrieval.trained_judges.squad_data import SquadArticle, SquadQuestion

PARA = (
    "The Normans were the people who in the 10th and 11th centuries gave their name to "
    "Normandy, a region in France. They were descended from Norse raiders led by Rollo. "
    "In 1066 William the Conqueror invaded England."
)


def test_entity_swap_replaces_a_name_with_another_of_the_article() -> None:
    pool = [("name", "Rollo"), ("name", "Normandy"), ("name", "Paris"), ("year", "1066")]
    q = "Who led the Norse raiders that settled in Normandy?"
    new = swap_entity(
        q, pool, "They were descended from Norse raiders led by Rollo.", random.Random(1)
    )
    assert new is not None and new != q
    assert "Paris" in new or "Rollo" not in new


def test_year_swap_never_keeps_the_year() -> None:
    new = swap_entity("What happened in 1066?", [("year", "1066")], PARA, random.Random(0))
    assert new is not None and "1066" not in new


def test_negate_and_antonym() -> None:
    assert negate("Who was the first king?") == "Who was not the first king?"
    assert negate("Who was not there?") is None
    assert swap_antonym("Who was the first one?", random.Random(0)) == "Who was the last one?"
    assert swap_antonym("Where is it?", random.Random(0)) is None


def test_without_answer_drops_the_answer_sentence() -> None:
    start = PARA.index("Rollo")
    cut = without_answer(PARA, start, start + len("Rollo"))
    assert "Rollo" not in cut and "William" in cut


def test_echo_forms_repeat_the_question_words() -> None:
    q = "Who led the Norse raiders?"
    for form in ECHO_FORMS:
        text = echo_text(q, form)
        assert "Norse" in text or "norse" in text.lower()


def _article() -> SquadArticle:
    other = "Paris is the capital of France. It lies on the Seine and has many museums."
    third = "The Seine flows through Paris to the English Channel at Le Havre."
    qs = [
        SquadQuestion("Who led the Norse raiders?", "Rollo", PARA.index("Rollo")),
        SquadQuestion("When did William invade England?", "1066", PARA.index("1066")),
    ]
    return SquadArticle(
        "Normans", (PARA, other, third),
        ((*qs,), (SquadQuestion("What river is Paris on?", "Seine", other.index("Seine")),), ()),
    )  # fmt: skip


def test_varied_echoes_add_no_word_but_a_lead_in_and_vary_their_surface() -> None:
    q = "Who led the Norse raiders that settled in Normandy?"
    rng = random.Random(3)
    lead_words = {w.lower() for lead in ECHO_LEAD_INS for w in lead.split()}
    seen = set()
    for _ in range(300):
        base = echo_text(q, rng.choice(ECHO_FORMS))
        out = vary_echo(base, rng)
        base_words = {w.strip("?.!,:").lower() for w in base.split()}
        extra = {w.strip("?.!,:-").lower() for w in out.split()} - base_words - {""}
        assert extra <= lead_words, (base, out)
        seen.add((out.endswith("?"), out == out.lower(), out.split()[0] in lead_words))
    assert len(seen) >= 5  # end marks, cases and lead-ins all vary


def test_examples_negatives_never_hold_their_answer_and_positives_do() -> None:
    art = _article()
    examples = ExampleBuilder(seed=3).article(art, questions_per_paragraph=2)
    assert any(e.answerable for e in examples) and any(not e.answerable for e in examples)
    answers = {q.question: q.answer for qs in art.questions for q in qs}
    for e in examples:
        if e.answerable:
            assert e.passage[e.answer_start : e.answer_end] == answers[e.question]
        elif e.kind.startswith(("answer_removed", "bm25_negative", "echo")):
            original = next(
                (a for q, a in answers.items() if q in e.question or e.question in q), None
            )
            if original is not None and e.kind.startswith(("answer_removed", "bm25")):
                assert original.lower() not in e.passage.lower()


def test_examples_are_seeded() -> None:
    a = ExampleBuilder(seed=5).article(_article(), 2)
    b = ExampleBuilder(seed=5).article(_article(), 2)
    assert a == b


@pytest.mark.parametrize(
    ("line", "error"),
    [
        ("not json", "line 1: not JSON"),
        ("[1, 2]", "line 1: not a JSON object"),
        ('{"question": "q"}', "line 1: reader needs string fields"),
        ('{"question": "q", "passage": 3}', "missing or not text: passage"),
    ],
)
def test_pair_lines_with_errors_name_the_line(line: str, error: str) -> None:
    (parsed,) = parse_lines("reader", [line])
    assert parsed.row is None and parsed.error is not None and error in parsed.error


def test_pair_lines_keep_good_rows_and_skip_blank_lines() -> None:
    parsed = parse_lines("correctness", ["", '{"answer": "a", "reference": "b", "id": 7}'])
    assert [p.line for p in parsed] == [2]
    assert parsed[0].row == {"answer": "a", "reference": "b", "id": 7}
