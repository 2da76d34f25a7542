"""The trained standalone probe of Chinese questions: its threshold rule, the shipped weights,
the in-place builder keeping only the questions it passes, and span choice reading on through
the chunks while they leave spans unasked in place (English reads the first chunks only)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import polars as pl
import pytest

from ragcourt.qagen.answer_first import DocumentInfo, read_span_contexts, span_contexts
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


def _one_document(sentence: str, n: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(chunks, documents): one document of ``n`` copies of ``sentence``, one chunk each."""
    text = sentence * n
    size = len(sentence)
    documents = pl.DataFrame({"doc_id": ["d"], "text": [text]})
    chunks = pl.DataFrame(
        {
            "chunk_id": [f"c{i:02d}" for i in range(n)],
            "doc_id": ["d"] * n,
            "char_start": [i * size for i in range(n)],
            "char_end": [(i + 1) * size for i in range(n)],
            "text": [sentence] * n,
            "n_tokens": [50] * n,
        }
    )
    return chunks, documents


def _q(**answer_first: object) -> QAGenParams:
    return QAGenParams.model_validate(
        {"method": "answer_first", "max_attempts": 4, "min_context_tokens": 1,
         "answer_first": {"extractor": "rules", "standalone_probe": False, **answer_first}}
    )  # fmt: skip


def test_span_choice_reads_on_while_chunks_leave_spans_unasked_in_place() -> None:
    chunks, documents = _one_document("全市改制企业９０％以上职工自愿认股。", 30)  # names nothing
    spans = read_span_contexts(chunks, documents, _q())
    assert spans.frame.is_empty() and spans.spans_not_askable > 0
    assert spans.chunks_used == 30  # 4, then 4 more, 8, 16: every chunk, in the same order


def test_english_text_reads_only_the_first_chunks_as_before() -> None:
    chunks, documents = _one_document("The Eiffel Tower opened in Paris in 1889. ", 30)
    spans = read_span_contexts(chunks, documents, _q())
    once = span_contexts(qagen_contexts(chunks, documents, _q()), _q())
    assert spans.frame.equals(once.frame) and spans.chunks_used == once.chunks_used <= 4
    assert spans.spans_not_askable == 0


def test_the_first_contexts_of_a_larger_sample_are_the_smaller_sample() -> None:
    chunks, documents = _one_document("The Eiffel Tower opened in Paris in 1889. ", 30)
    small = qagen_contexts(chunks, documents, _q())["source_chunk_id"].to_list()
    large = qagen_contexts(chunks, documents, _q(), 20)["source_chunk_id"].to_list()
    assert len(small) == 4 and len(large) == 20 and large[:4] == small


@pytest.mark.slow
def test_the_shipped_probe_reads_questions_with_its_real_model() -> None:
    probe = load_probe()
    questions = ["１９９７年中国的国内生产总值增长了百分之多少？", "他们为什么这样做？"]
    first, again = probe.scores(questions), probe.scores(questions)
    assert first == again  # the same states, the same scores
    assert all(0.0 < p < 1.0 for p in first)
    assert probe.keeps(questions) == [p >= probe.threshold for p in first]


def _two_documents() -> tuple[pl.DataFrame, pl.DataFrame, DocumentInfo]:
    """(chunks, documents, docs): a document with a title that can be cited and one without
    (a byline), two chunks each, the untitled one first."""
    texts = {"untitled": [TEXT, TEXT], "titled": [TEXT, TEXT]}
    rows = [(d, i, t) for d, ts in texts.items() for i, t in enumerate(ts)]
    chunks = pl.DataFrame(
        {
            "chunk_id": [f"{d}-{i}" for d, i, _ in rows],
            "doc_id": [d for d, _, _ in rows],
            "char_start": [i * len(t) for _, i, t in rows],
            "char_end": [(i + 1) * len(t) for _, i, t in rows],
            "text": [t for _, _, t in rows],
            "n_tokens": [50] * len(rows),
        }
    )
    documents = pl.DataFrame({"doc_id": list(texts), "text": ["".join(t) for t in texts.values()]})
    titles = {"untitled": "本报记者卢新宁", "titled": "上海证券交易所成交额创新高"}
    return chunks, documents, DocumentInfo(texts, titles)


def test_questions_citing_their_source_and_passing_the_probe_are_tried_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The order of :data:`IN_PLACE_ORDER`: cited and passed first; the rest from the reserve,
    best first, only once every chunk is read and candidates are short."""
    import ragcourt.qagen.answer_first as af

    def scripted_probe(models_file: str | None) -> Callable[[Sequence[str]], list[bool]]:
        return lambda questions: ["１９９３" not in q for q in questions]  # scripted: control

    monkeypatch.setattr(af, "_probe_filter", scripted_probe)
    chunks, documents, docs = _two_documents()
    q = _q(standalone_probe=True, in_place_frame=True, spans_per_chunk=4)
    q = q.model_copy(update={"max_attempts": 40})
    spans = read_span_contexts(chunks, documents, q, docs)
    frame = spans.frame
    cited = frame["source_frame"].is_not_null().to_list()
    assert cited[0] and not cited[-1] and cited == sorted(cited, reverse=True)
    questions = [
        in_place_question(r["context"], r["answer_start"] - r["char_start"],
                          r["answer_end"] - r["char_start"], r["answer_type"]).question or ""
        for r in frame.iter_rows(named=True)
    ]  # fmt: skip
    priorities = [
        af.IN_PLACE_ORDER[c, "１９９３" not in question]
        for c, question in zip(cited, questions, strict=True)
    ]
    assert priorities == sorted(priorities) and len(set(priorities)) == 4
    assert frame["source_frame"].drop_nulls().unique().to_list() == [
        "据《上海证券交易所成交额创新高》，"
    ]
