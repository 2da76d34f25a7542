"""Token F1 / containment judges (DAFE's adapted exact match, SQuAD normalisation)."""

from __future__ import annotations

import pytest

from ragcourt.judging.lexical import (
    ContainmentJudge,
    TokenF1Judge,
    contains_reference,
    normalize_answer,
    token_f1,
)
from ragcourt.judging.vocabulary import AnswerItem


def test_normalize_answer_squad_rules() -> None:
    assert normalize_answer("  The  Treaty, of Versailles!  ") == "treaty of versailles"
    assert normalize_answer("An apple a day") == "apple day"


def test_token_f1_known_values() -> None:
    # pred tokens [hermann, muller, signed], ref [hermann, muller]: P=2/3, R=1 -> F1=0.8
    assert token_f1("Hermann Muller signed.", "Hermann Muller") == pytest.approx(0.8)
    assert token_f1("nothing shared", "Hermann Muller") == 0.0
    assert token_f1("", "x") == 0.0
    # bag-of-tokens: repeated tokens only count as often as both sides have them
    assert token_f1("war war war", "war") == pytest.approx(2 * (1 / 3) * 1 / (1 / 3 + 1))


def test_containment_is_token_aligned() -> None:
    assert contains_reference("It was signed by Hermann Müller in 1919.", "Hermann Müller")
    assert not contains_reference("It was in 19190.", "1919")  # not inside a longer token
    assert not contains_reference("anything", "the")  # reference normalises to empty


def test_token_f1_judge_best_reference_and_threshold() -> None:
    judge = TokenF1Judge("tf1", threshold=0.5)
    items = [
        AnswerItem("q", "The president was Lincoln.", ("George Washington", "Abraham Lincoln")),
        AnswerItem("q", "Abraham", ("Abraham Lincoln",)),  # F1 = 2*(1*0.5)/(1.5) = 0.667
        AnswerItem("q", "Washington", ("Abraham Lincoln",)),
        AnswerItem("q", "x", ()),
    ]
    v = judge.judge(items)
    assert [x.verdict for x in v] == [False, True, False, None]
    assert v[0].score == pytest.approx(token_f1("The president was Lincoln.", "Abraham Lincoln"))
    assert "reference 2" in v[0].justification
    assert v[1].score == pytest.approx(2 / 3)
    assert v[3].error == "no reference answer"


def test_token_f1_judge_containment_wins_for_verbose_answers() -> None:
    long = "After a long debate in the assembly, the answer is Abraham Lincoln of Illinois."
    [v] = TokenF1Judge("tf1", threshold=0.9).judge([AnswerItem("q", long, ("Abraham Lincoln",))])
    assert v.verdict is True and v.score == 1.0 and "contained" in v.justification


def test_containment_judge() -> None:
    v = ContainmentJudge("em").judge(
        [AnswerItem("q", "It is Paris.", ("paris",)), AnswerItem("q", "Lyon", ("Paris",))]
    )
    assert [x.verdict for x in v] == [True, False]
