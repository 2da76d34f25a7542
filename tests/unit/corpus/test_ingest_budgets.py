"""Every corpus file gets a budget (bytes, characters, pages, nesting, seconds), only regular
files are read, and odd names become rows: real files, FIFOs and a real parser process."""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

import pytest

import ragcourt.corpus.ingest as ingest_mod
import ragcourt.corpus.parse_worker as worker_mod
from ragcourt.corpus.formats import Budget, Parsed, parse_bytes
from ragcourt.corpus.ingest import ingest
from ragcourt.corpus.params import CorpusParams

GOOD = "A plain document about the harbour of Valletta and its ferries.\n"


def _corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    root.mkdir()
    (root / "good.txt").write_text(GOOD, encoding="utf-8")
    return root


def _reasons(rejected: object) -> dict[str, str]:
    import polars as pl

    assert isinstance(rejected, pl.DataFrame)
    return dict(zip(rejected["path"].to_list(), rejected["reason"].to_list(), strict=True))


def test_a_fifo_is_a_rejected_row_and_never_blocks(tmp_path: Path) -> None:
    root = _corpus(tmp_path)
    os.mkfifo(root / "pipe.txt")
    t0 = time.perf_counter()
    docs, rejected = ingest(CorpusParams(dir=str(root)))
    assert time.perf_counter() - t0 < 10
    assert docs["path"].to_list() == [(root / "good.txt").as_posix()]
    assert _reasons(rejected)[(root / "pipe.txt").as_posix()] == "not a regular file (a FIFO)"


def test_a_file_swapped_for_a_fifo_after_listing_is_rejected(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _corpus(tmp_path)
    victim = root / "swapped.txt"
    victim.write_text(GOOD + " other", encoding="utf-8")
    listed = ingest_mod.list_files

    def list_then_swap(r: Path, unlisted: list[tuple[Path, str]] | None = None) -> list[Path]:
        out = listed(r, unlisted)
        victim.unlink()
        os.mkfifo(victim)
        return out

    monkeypatch.setattr(ingest_mod, "list_files", list_then_swap)
    t0 = time.perf_counter()
    _, rejected = ingest(CorpusParams(dir=str(root)))
    assert time.perf_counter() - t0 < 10
    assert "not a regular file (a FIFO)" in _reasons(rejected)[victim.as_posix()]


def test_deeply_nested_html_is_refused_in_linear_time(tmp_path: Path) -> None:
    root = _corpus(tmp_path)
    (root / "deep.html").write_text("<div>" * 100_000 + "x" + "</div>" * 100_000)
    t0 = time.perf_counter()
    _, rejected = ingest(CorpusParams(dir=str(root)))
    assert time.perf_counter() - t0 < 10
    assert "corpus.html_max_depth" in _reasons(rejected)[(root / "deep.html").as_posix()]


def test_html_within_the_depth_cap_is_read(tmp_path: Path) -> None:
    root = _corpus(tmp_path)
    (root / "ok.html").write_text("<div>" * 50 + "Nested words here." + "</div>" * 50)
    docs, _ = ingest(CorpusParams(dir=str(root)))
    assert "Nested words here." in docs.filter(docs["format"] == "html")["text"][0]


def _shared_stream_pdf(path: Path, pages: int, line: str) -> None:
    """A PDF whose ``pages`` pages all draw one and the same content stream."""
    from pypdf import PdfWriter
    from pypdf.generic import (
        DecodedStreamObject,
        DictionaryObject,
        NameObject,
    )

    writer = PdfWriter()
    font = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Font"),
            NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject("/Helvetica"),
        }
    )
    stream = DecodedStreamObject()
    body = "".join(f"BT /F1 10 Tf 20 {700 - 12 * i} Td ({line}) Tj ET\n" for i in range(50))
    stream.set_data(body.encode("latin-1"))
    ref = writer._add_object(stream)
    font_ref = writer._add_object(font)
    for _ in range(pages):
        page = writer.add_blank_page(612, 792)
        page[NameObject("/Contents")] = ref
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font_ref})}
        )
    with path.open("wb") as fh:
        writer.write(fh)


def test_pages_sharing_one_content_stream_add_its_text_once(tmp_path: Path) -> None:
    root = _corpus(tmp_path)
    _shared_stream_pdf(root / "shared.pdf", 2_000, "the same line of text drawn again")
    size = (root / "shared.pdf").stat().st_size
    t0 = time.perf_counter()
    docs, _ = ingest(CorpusParams(dir=str(root)))
    assert time.perf_counter() - t0 < 30
    text = docs.filter(docs["format"] == "pdf")["text"][0]
    assert text.count("the same line of text drawn again") == 50
    assert len(text) < 10 * size


def test_too_much_text_names_the_key(tmp_path: Path) -> None:
    root = _corpus(tmp_path)
    (root / "long.txt").write_text("word " * 2_000, encoding="utf-8")
    _, rejected = ingest(CorpusParams(dir=str(root), max_file_chars=1_000))
    assert "corpus.max_file_chars" in _reasons(rejected)[(root / "long.txt").as_posix()]


def test_too_many_bytes_names_the_key(tmp_path: Path) -> None:
    root = _corpus(tmp_path)
    (root / "big.txt").write_text("word " * 1_000, encoding="utf-8")
    _, rejected = ingest(CorpusParams(dir=str(root), max_file_bytes=1_000))
    assert "corpus.max_file_bytes" in _reasons(rejected)[(root / "big.txt").as_posix()]


def test_a_slow_parse_is_killed_and_the_next_file_still_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _corpus(tmp_path)
    (root / "a_slow.md").write_text("# Slow\n\nthis one hangs the parser", encoding="utf-8")
    real = parse_bytes

    def hang_on_slow(data: bytes, fmt: str, budget: Budget) -> Parsed:
        if b"hangs the parser" in data:
            time.sleep(60)
        return real(data, fmt, budget)

    monkeypatch.setattr(worker_mod, "parse_bytes", hang_on_slow)  # the forked worker inherits it
    t0 = time.perf_counter()
    docs, rejected = ingest(CorpusParams(dir=str(root), file_timeout_s=1.0))
    assert time.perf_counter() - t0 < 15
    assert "corpus.file_timeout_s" in _reasons(rejected)[(root / "a_slow.md").as_posix()]
    assert docs["path"].to_list() == [(root / "good.txt").as_posix()]


def test_an_undecodable_name_is_a_rejected_row(tmp_path: Path) -> None:
    root = _corpus(tmp_path)
    raw = os.fsencode(root) + b"/bad\xff\xfename.txt"
    with open(raw, "wb") as fh:
        fh.write(GOOD.encode() + b" more")
    docs, rejected = ingest(CorpusParams(dir=str(root)))
    reasons = _reasons(rejected)
    [(shown, why)] = [(p, r) for p, r in reasons.items() if "bad" in p]
    assert "\\xff\\xfe" in shown and why.startswith("undecodable file name")
    assert docs.height == 1


def test_control_characters_in_names_are_escaped_in_the_log(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root = _corpus(tmp_path)
    (root / "evil\x1b[31m\nname.bin").write_text("x", encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="ragcourt"):
        ingest(CorpusParams(dir=str(root)))
    lines = [r.getMessage() for r in caplog.records if "evil" in r.getMessage()]
    assert lines, "the rejected file is logged"
    assert all("\x1b" not in m and "\n" not in m for m in lines)
