"""The meta-evaluation's sentence-reference configurations read the span's sentence."""

from __future__ import annotations

import polars as pl

from benchmarks import meta_eval as me


def test_sentence_references_replace_the_span_where_a_sentence_exists() -> None:
    qa = pl.DataFrame(
        {
            "question_id": ["q1", "q2"],
            "reference_answers": [["1832"], ["Manuel Ortega"]],
            "long_reference": ["The office opened in 1832.", None],
        }
    )
    out = me.sentence_references(qa)
    assert out["reference_answers"].to_list() == [["The office opened in 1832."], ["Manuel Ortega"]]
    assert out.drop("reference_answers").equals(qa.drop("reference_answers"))
    # a bring-your-own QA table without the answer-first record is left as it is
    assert me.sentence_references(qa.drop("long_reference")).equals(qa.drop("long_reference"))


def test_every_sentence_configuration_is_a_known_configuration() -> None:
    assert set(me.CONFIGS) >= me.SENTENCE_REFERENCE
    for name in me.SENTENCE_REFERENCE:
        assert me.CONFIGS[name] == me.CONFIGS[name.removesuffix("-sentence")]
