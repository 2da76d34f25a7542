"""Pure logic of QA generation: context sampling, reply cleaning, batching, duplicates."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from pydantic import ValidationError

from ragcourt.core.errors import ConfigError, RagcourtError
from ragcourt.qagen.contexts import load_few_shot, sample_contexts
from ragcourt.qagen.duplicates import DuplicateIndex, normalize_question
from ragcourt.qagen.filters import BinaryVerdict, ScoreVerdict, not_standalone_reason
from ragcourt.qagen.generator import clean_answer, clean_question, next_batch_size


def _corpus(n_docs: int, chunks_per_doc: list[int]) -> tuple[pl.DataFrame, pl.DataFrame]:
    docs, chunks = [], []
    for d in range(n_docs):
        parts = [f"Doc{d} part {j} says fact {d * 100 + j}. " for j in range(chunks_per_doc[d])]
        text = "".join(parts)
        docs.append((f"d{d}", f"d{d}.txt", f"D{d}", "txt", text, len(text), None))
        pos = 0
        for j, p in enumerate(parts):
            chunks.append((f"c-d{d}-{j}", "c", f"d{d}", j, pos, pos + len(p), 10 + j, p))
            pos += len(p)
    dschema = ["doc_id", "path", "title", "format", "text", "n_chars", "duplicate_of"]
    cschema = {
        "chunk_id": pl.String, "chunking": pl.String, "doc_id": pl.String,
        "chunk_index": pl.Int32, "char_start": pl.Int64, "char_end": pl.Int64,
        "n_tokens": pl.Int32, "text": pl.String,
    }  # fmt: skip
    return (
        pl.DataFrame(docs, schema=dschema, orient="row"),
        pl.DataFrame(chunks, schema=cschema, orient="row"),
    )


def test_stratified_sampling_covers_every_document_first() -> None:
    docs, chunks = _corpus(4, [6, 1, 3, 2])
    got = sample_contexts(chunks, docs, n=4, seed=1, stratify=True)
    assert sorted(got["doc_id"].to_list()) == ["d0", "d1", "d2", "d3"]
    full = sample_contexts(chunks, docs, n=100, seed=1, stratify=True)
    assert full.height == chunks.height
    assert full["source_chunk_id"].n_unique() == chunks.height
    # round-robin: after the single-chunk doc d1 is used up, the next turn has 3 documents
    assert sorted(full["doc_id"][4:7].to_list()) == ["d0", "d2", "d3"]


def test_sampling_is_seeded_and_ignores_row_order() -> None:
    docs, chunks = _corpus(3, [5, 5, 5])
    a = sample_contexts(chunks, docs, n=8, seed=7, stratify=False)
    b = sample_contexts(chunks.sample(fraction=1.0, shuffle=True, seed=3), docs, n=8, seed=7,
                        stratify=False)  # fmt: skip
    c = sample_contexts(chunks, docs, n=8, seed=8, stratify=False)
    assert a.equals(b)
    assert a["source_chunk_id"].to_list() != c["source_chunk_id"].to_list()
    s1 = sample_contexts(chunks, docs, n=8, seed=7, stratify=True)
    s2 = sample_contexts(chunks.reverse(), docs, n=8, seed=7, stratify=True)
    assert s1.equals(s2)


def test_sampled_context_is_the_document_slice_and_short_chunks_are_skipped() -> None:
    docs, chunks = _corpus(2, [4, 4])
    got = sample_contexts(chunks, docs, n=100, seed=0, stratify=True, min_tokens=12)
    assert got.height == 4  # n_tokens = 10 + index: indexes 2 and 3 of each doc remain
    texts = dict(zip(docs["doc_id"], docs["text"], strict=True))
    for r in got.iter_rows(named=True):
        assert texts[r["doc_id"]][r["char_start"] : r["char_end"]] == r["context"]


def test_sampling_rejects_chunk_text_that_is_not_its_document_slice() -> None:
    docs, chunks = _corpus(1, [2])
    broken = chunks.with_columns(pl.lit("tampered text").alias("text"))
    with pytest.raises(RagcourtError, match="differs from its document slice"):
        sample_contexts(broken, docs, n=2, seed=0, stratify=False)


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("What did the President ask Congress for in 1862?", None),
        ("Question: What did the President ask Congress for in 1862?\nAnswer: money", None),
        ('1. "What did the President ask Congress for in 1862?" Because...', None),
        ("**Question:** What did the President ask Congress for in 1862?", None),
        ("\n\n  \nWhat did the President ask Congress for in 1862", "no-qmark"),
        ("Who?", "none"),
        ("What is the answer to the question 'What is the answer to " * 8, "none"),
        ("   ", "none"),
    ],
)
def test_clean_question(reply: str, expected: str | None) -> None:
    got = clean_question(reply)
    if expected == "none":
        assert got is None
    elif expected == "no-qmark":
        assert got == "What did the President ask Congress for in 1862"
    else:
        assert got == "What did the President ask Congress for in 1862?"


def test_clean_answer() -> None:
    assert clean_answer("Answer: He asked for money.") == "He asked for money."
    assert clean_answer("  \n ") is None


def test_next_batch_size_follows_the_observed_acceptance_rate() -> None:
    assert next_batch_size(needed=5, accepted=0, attempts=0, batch_size=8, left=60) == 5
    assert next_batch_size(needed=5, accepted=5, attempts=10, batch_size=8, left=60) == 8
    assert next_batch_size(needed=2, accepted=4, attempts=4, batch_size=8, left=60) == 2
    assert next_batch_size(needed=20, accepted=0, attempts=8, batch_size=8, left=3) == 3


def test_duplicate_index_exact_and_near() -> None:
    idx = DuplicateIndex(threshold=0.9)
    e1 = np.array([1.0, 0.0], dtype=np.float32)
    assert idx.check("Who wrote the letter?", e1) is None
    idx.add("q1", "Who wrote the letter?", e1)
    exact = idx.check("  who WROTE the letter ", np.array([0.0, 1.0], dtype=np.float32))
    assert exact is not None and exact.kind == "exact_duplicate" and exact.of_id == "q1"
    near_vec = np.array([0.95, np.sqrt(1 - 0.95**2)], dtype=np.float32)
    near = idx.check("Which person authored the letter?", near_vec)
    assert near is not None and near.kind == "near_duplicate"
    assert near.similarity == pytest.approx(0.95, abs=1e-5)
    far_vec = np.array([0.8, 0.6], dtype=np.float32)
    assert idx.check("When was the letter sent?", far_vec) is None
    assert normalize_question("What's  the date?") == "what s the date"


def test_verdict_models_accept_small_model_spellings_only() -> None:
    assert BinaryVerdict.model_validate({"reason": "r", "score": "yes"}).score == 1
    assert BinaryVerdict.model_validate({"reason": "r", "score": 0.0}).score == 0
    assert BinaryVerdict.model_validate({"reason": "r", "score": True}).score == 1
    with pytest.raises(ValidationError):
        BinaryVerdict.model_validate({"reason": "r", "score": 0.7})
    with pytest.raises(ValidationError):
        ScoreVerdict.model_validate({"reason": "r", "score": 1.5})


def test_few_shot_file_formats_and_errors(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("# comment\n\nWho paid?\n  Which  port?  \n")
    assert load_few_shot(tmp_path / "a.txt") == ["Who paid?", "Which port?"]
    (tmp_path / "b.json").write_text('["Who paid?", {"question": "Which port?"}]')
    assert load_few_shot(tmp_path / "b.json") == ["Who paid?", "Which port?"]
    (tmp_path / "c.jsonl").write_text('{"question": "Who paid?"}\n\n')
    assert load_few_shot(tmp_path / "c.jsonl") == ["Who paid?"]
    (tmp_path / "d.json").write_text('["ok?", 3]')
    with pytest.raises(ConfigError, match=r"d.json: item 2"):
        load_few_shot(tmp_path / "d.json")
    (tmp_path / "e.txt").write_text("# only a comment\n")
    with pytest.raises(ConfigError, match="holds no questions"):
        load_few_shot(tmp_path / "e.txt")
    with pytest.raises(ConfigError, match="not found"):
        load_few_shot(tmp_path / "missing.txt")


@pytest.mark.parametrize(
    ("question", "standalone"),
    [
        ("What is the main idea of the text?", False),
        ("According to this passage, who paid the duty?", False),
        ("What is the answer to this question?", False),
        ("Which excerpts does the given paragraph quote?", False),
        ("What did Lincoln say about the question of slavery in 1862?", True),
        ("Which textile mills did the President mention in 1934?", True),
        ("Who signed the Articles of Confederation?", True),
        # the document's own voice
        ("What period does the speaker want to discuss in their final address?", False),
        ("Which assembly is issuing the statement?", False),
        ("How long did we make progress?", False),
        ("We built what in 1850?", False),
        ("Which programme raises our minimum wage?", False),
        ("What religion is being discussed?", False),
        # titles and the country are not the first person
        ("In what year was the Grotto of Our Lady of Lourdes built?", True),
        ("Which award did My Beautiful Dark Twisted Fantasy miss?", True),
        ("Which US state joined the Union in 1850?", True),
    ],
)
def test_not_standalone_reason(question: str, standalone: bool) -> None:
    assert (not_standalone_reason(question) is None) == standalone


def test_not_standalone_reason_names_what_it_found() -> None:
    assert not_standalone_reason("How long did we make progress?") == (
        "speaks in the document's voice ('we'), not a reader's"
    )
    assert not_standalone_reason("What religion is being discussed?") == (
        "asks what is talked about ('being discussed'), not for a fact"
    )
