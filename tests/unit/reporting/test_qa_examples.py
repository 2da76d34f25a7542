"""The QA section shows a few accepted questions with their reference, section and chunk,
escaped in both renderings; without sections (plain text, older chunk tables) it shows "–"."""

from __future__ import annotations

from pathlib import Path

import polars as pl
from _report_data import frame, write_artifacts

from ragcourt.core.io import write_parquet
from ragcourt.core.schemas import OPTIONAL_COLUMNS, frame_schema
from ragcourt.reporting.artifacts import Artifacts
from ragcourt.reporting.sections.qa_set import QA_EXAMPLES, qa_generation
from ragcourt.reporting.stage import render

ATTACK = '<script>alert("q")</script> [click](http://evil.example)'


def _qa(root: Path) -> None:
    rows = [
        {
            "question_id": f"q-{i}",
            "question": f"Which handler writes to a stream? {ATTACK if i == 0 else ''}",
            "reference_answers": ["StreamHandler"],
            "doc_id": "d1",
            "char_start": 0,
            "char_end": 30,
            "context": f"The StreamHandler class\n\nsends output {i}. <b>bold</b>",
            "source_chunk_id": f"c512:d1:{i}",
            "answer_type": "name",
            "roundtrip_f1": 1.0,
        }
        for i in range(5)
    ]
    write_parquet(frame("qa", rows), root / "data/qa/qa.parquet", "qa")


def _chunks(root: Path, with_section: bool) -> None:
    schema = {**frame_schema("chunks"), **(OPTIONAL_COLUMNS["chunks"] if with_section else {})}
    rows = [
        {"chunk_id": f"c512:d1:{i}", "chunking": "c512", "doc_id": "d1", "chunk_index": i,
         "char_start": 0, "char_end": 30, "n_tokens": 9, "text": "t",
         **({"section": "logging › <i>StreamHandler</i>"} if with_section else {})}
        for i in range(5)
    ]  # fmt: skip
    write_parquet(pl.DataFrame(rows, schema=schema), root / "data/chunks/c512.parquet", "chunks")


def test_accepted_questions_show_with_chunk_and_section_escaped(tmp_path: Path) -> None:
    write_artifacts(tmp_path)
    _qa(tmp_path)
    _chunks(tmp_path, with_section=True)
    sec = qa_generation(Artifacts(tmp_path))
    assert [e.title for e in sec.examples] == [f"q-{i}" for i in range(QA_EXAMPLES)]
    fields = dict(sec.examples[1].fields)
    assert fields["section"] == "logging › <i>StreamHandler</i>"
    assert fields["chunk"] == "The StreamHandler class sends output 1. <b>bold</b>"
    assert fields["reference"] == "StreamHandler"
    assert sec.examples[0].outcome == "accepted (answer type name; round-trip F1 1.000)"
    html, md = render([sec], tmp_path, generated="2026-01-01 00:00 UTC")
    for text in (html, md):
        assert "<script>" not in text and "<b>bold</b>" not in text and "<i>" not in text
        assert "&lt;script&gt;" in text and "StreamHandler" in text
    assert "[click](" not in md  # brackets escaped: no link


def test_without_sections_the_examples_say_so(tmp_path: Path) -> None:
    write_artifacts(tmp_path)
    _qa(tmp_path)
    _chunks(tmp_path, with_section=False)
    sec = qa_generation(Artifacts(tmp_path))
    assert len(sec.examples) == QA_EXAMPLES
    assert all(dict(e.fields)["section"] == "–" for e in sec.examples)
