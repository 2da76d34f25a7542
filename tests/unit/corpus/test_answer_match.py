"""SQuAD answer matching: full-width forms match their ASCII, CJK is compared by character,
English is SQuAD's normalisation unchanged."""

from __future__ import annotations

import pytest

from ragcourt.corpus.answer_match import contains_reference, fold_width, token_f1


@pytest.mark.parametrize(
    ("answer", "reference", "f1"),
    [
        ("90%", "９０％", 1.0),  # a news reference in full-width digits
        ("1986", "１９８６年", 2 / 3),  # the year without 年: two of three tokens
        ("房地产交易中心", "房地产交易中心", 1.0),
        ("3000", "三万", 0.0),
        ("The Cat!", "the cat", 1.0),  # SQuAD: case, articles and punctuation dropped
    ],
)
def test_token_f1(answer: str, reference: str, f1: float) -> None:
    assert token_f1(answer, reference) == pytest.approx(f1)


def test_fold_width_keeps_length_and_leaves_ascii_alone() -> None:
    assert fold_width("２０２５年５月　ＧＤＰ") == "2025年5月 GDP"
    text = "Plain ASCII, 12.5% (unchanged)."
    assert fold_width(text) == text


def test_containment_sees_through_width() -> None:
    assert contains_reference("比重是30%左右", "３０％")
