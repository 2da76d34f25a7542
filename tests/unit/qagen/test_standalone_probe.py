"""The trained standalone probe of Chinese questions: its threshold rule, the shipped weights,
the in-place builder keeping only the questions it passes, and the stage reading on through
every chunk when it is on."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl
import pytest

from ragcourt.qagen.answer_spans_zh import chinese_spans
from ragcourt.qagen.contexts import qagen_contexts
from ragcourt.qagen.in_place_zh import askable_spans, in_place_question
from ragcourt.qagen.params import QAGenParams
from ragcourt.qagen.standalone_probe import SHIPPED, load_probe, precision_threshold


def test_the_threshold_is_the_lowest_score_keeping_the_asked_precision() -> None:
    scores = np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.4])
    labels = np.array([1, 1, 0, 1, 0, 0])
    # top 1: 1.0, top 2: 1.0, top 3: 0.67, top 4: 0.75, top 5: 0.6
    assert precision_threshold(scores, labels, 0.75) == 0.6
    assert precision_threshold(scores, labels, 1.0) == 0.8
    assert precision_threshold(scores, np.zeros(6, dtype=int), 0.5) is None  # no such score


def test_the_shipped_probe_is_whole_and_says_where_it_came_from() -> None:
    probe = load_probe()
    assert SHIPPED.is_file()
    assert len(probe.coef) == len(probe.mean) == len(probe.scale) > 100
    assert 0.0 < probe.threshold < 1.0
    assert probe.model.startswith("local/") and probe.pooling in ("last", "mean")
    assert "zh_standalone_probe" in probe.provenance["command"]
    assert probe.provenance["fit"]["questions"] >= 200


TEXT = (
    "万德莱公司于１９９３年成立，作为立志发展民族高科技企业的徐杰，大胆地把企业定位到通讯工业。"
    "１９９７年，上海证券交易所的成交额达到５０００亿元。"
)


def test_a_question_filter_keeps_only_the_questions_it_passes() -> None:
    spans = chinese_spans(TEXT)
    askable = askable_spans(TEXT, spans)
    assert len(askable) >= 2
    asked: list[list[str]] = []

    def scripted_filter(questions: Sequence[str]) -> list[bool]:  # scripted: exact control
        asked.append(list(questions))
        return ["上海" in q for q in questions]

    kept = askable_spans(TEXT, spans, scripted_filter)
    assert len(asked) == 1 and len(asked[0]) == len(askable)  # one batch, every askable span
    questions = [in_place_question(TEXT, s.start, s.end, s.answer_type).question for s in kept]
    assert kept and all(q is not None and "上海" in q for q in questions)


@pytest.mark.parametrize("probe", [False, True])
def test_with_the_probe_the_stage_reads_every_chunk(probe: bool) -> None:
    n = 50
    documents = pl.DataFrame({"doc_id": ["d"], "text": ["x" * n]})
    chunks = pl.DataFrame(
        {
            "chunk_id": [f"c{i:02d}" for i in range(n)],
            "doc_id": ["d"] * n,
            "char_start": list(range(n)),
            "char_end": list(range(1, n + 1)),
            "text": ["x"] * n,
            "n_tokens": [5] * n,
        }
    )
    q = QAGenParams.model_validate(
        {"method": "answer_first", "max_attempts": 12, "min_context_tokens": 1,
         "answer_first": {"standalone_probe": probe}}
    )  # fmt: skip
    got = qagen_contexts(chunks, documents, q)["source_chunk_id"].to_list()
    off = QAGenParams.model_validate(
        {"method": "answer_first", "max_attempts": 12, "min_context_tokens": 1,
         "answer_first": {"standalone_probe": False}}
    )  # fmt: skip
    first = qagen_contexts(chunks, documents, off)["source_chunk_id"].to_list()
    assert len(got) == (n if probe else 12)
    assert got[:12] == first  # the same order: reading on only adds chunks after them


@pytest.mark.slow
def test_the_shipped_probe_reads_questions_with_its_real_model() -> None:
    probe = load_probe()
    questions = ["１９９７年中国的国内生产总值增长了百分之多少？", "他们为什么这样做？"]
    first, again = probe.scores(questions), probe.scores(questions)
    assert first == again  # the same states, the same scores
    assert all(0.0 < p < 1.0 for p in first)
    assert probe.keeps(questions) == [p >= probe.threshold for p in first]
