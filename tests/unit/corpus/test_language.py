"""Language detection at ingest (issue 18) on the hand-written multilingual test corpus."""

from __future__ import annotations

import shutil
from pathlib import Path

from ragcourt.core.params import CorpusParams
from ragcourt.corpus.ingest import ingest
from ragcourt.corpus.language import detect_language

DATA = Path(__file__).resolve().parents[2] / "data" / "multilingual"
DEMO = Path(__file__).resolve().parents[3] / "data" / "corpus"


def test_ingest_records_language_per_document_in_a_mixed_corpus(tmp_path: Path) -> None:
    for sub in ("zh", "de"):
        shutil.copytree(DATA / sub, tmp_path / sub)
    (tmp_path / "en.txt").write_text(
        "The harbour office weighed every crate of iron twice before the ships left.", "utf-8"
    )
    (tmp_path / "numbers.txt").write_text("1 2 3 4 5", "utf-8")
    docs, _ = ingest(CorpusParams(dir=str(tmp_path), extensions=[".txt"]))
    by_path = dict(zip(docs["path"].to_list(), docs["language"].to_list(), strict=True))
    assert {v for k, v in by_path.items() if "/zh/" in k} == {"zh"}
    assert {v for k, v in by_path.items() if "/de/" in k} == {"de"}
    assert by_path[f"{tmp_path.as_posix()}/en.txt"] == "en"
    assert by_path[f"{tmp_path.as_posix()}/numbers.txt"] == "und"
    conf = docs.filter(docs["language"] != "und")["language_confidence"].to_list()
    assert all(0.5 < c <= 1.0 for c in conf)


def test_demo_corpus_is_detected_as_english() -> None:
    docs, _ = ingest(CorpusParams(dir=str(DEMO), extensions=[".txt"]))
    assert set(docs["language"].to_list()) == {"en"}


def test_detection_is_deterministic_and_can_be_restricted() -> None:
    text = "Die Bahn führt im Dezember einen neuen Fahrplan ein."
    assert detect_language(text) == detect_language(text)
    assert detect_language(text, among=["zh", "de"]).language == "de"
    # no probability for any candidate: the CJK script decides, else the first code
    assert detect_language("1234", among=["en", "zh"]).language == "en"
