"""Ingest: formats, titles, bad files -> rejected rows, duplicates, zero-document error."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from ragcourt.core.errors import RagcourtError
from ragcourt.corpus.ingest import doc_hash, ingest, normalise, parse_html
from ragcourt.corpus.params import CorpusParams


def make_pdf(text: str) -> bytes:
    """A minimal valid one-page PDF showing ``text`` in Helvetica (xref offsets computed)."""
    content = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
    stream = b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream"
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        stream,
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = b"%PDF-1.4\n"
    offsets = []
    for i, obj in enumerate(objs, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + obj + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    for off in offsets:
        out += b"%010d 00000 n \n" % off
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    return out


def write(root: Path, name: str, data: str | bytes) -> Path:
    p = root / name
    p.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        p.write_text(data, encoding="utf-8")
    else:
        p.write_bytes(data)
    return p


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    write(root, "a.txt", "Plain title\n\nThe first document talks about tariffs.\r\nSecond line.")
    write(root, "b.md", "Intro line\n\n## The Budget ##\n\nSpending rose by 4 percent.")
    write(root, "c.rst", "Foreign Policy\n==============\n\nTreaties were signed.")
    write(
        root,
        "d.html",
        "<html><head><title>Labor &amp; Wages</title><style>p{color:red}</style>"
        "<script>var secret = 1;</script></head><body><h1>Ignored heading</h1>"
        "<p>Wages   grew.</p><p>Unions&nbsp;met.</p><noscript>no js</noscript></body></html>",
    )
    write(root, "e.pdf", make_pdf("Railroads were built across the West"))
    return root


def test_each_format_is_read_with_its_title(corpus: Path) -> None:
    docs, rejected = ingest(CorpusParams(dir=str(corpus)))
    assert rejected.is_empty()
    by = {Path(p).name: r for p, r in zip(docs["path"], docs.iter_rows(named=True), strict=True)}
    assert by["a.txt"]["title"] == "Plain title"
    assert "\r" not in by["a.txt"]["text"]
    assert by["b.md"]["title"] == "The Budget"
    assert by["c.rst"]["title"] == "Foreign Policy"
    html = by["d.html"]
    assert html["title"] == "Labor & Wages"
    assert "secret" not in html["text"] and "color" not in html["text"]
    assert "no js" not in html["text"]
    assert "Wages grew." in html["text"] and "Unions\xa0met." in html["text"]
    assert by["e.pdf"]["text"] == "Railroads were built across the West"
    assert by["e.pdf"]["format"] == "pdf"
    assert docs["n_chars"].to_list() == [len(t) for t in docs["text"]]
    assert docs["duplicate_of"].null_count() == docs.height


def test_doc_id_is_the_hash_of_the_normalised_text(corpus: Path) -> None:
    docs, _ = ingest(CorpusParams(dir=str(corpus)))
    for row in docs.iter_rows(named=True):
        assert row["doc_id"] == doc_hash(row["text"])
    # CRLF and trailing whitespace do not change the id
    assert doc_hash(normalise("x\r\ny  \n")) == doc_hash(normalise("x\ny"))


def test_bad_files_become_rejected_rows_and_do_not_abort(
    corpus: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write(corpus, "empty.txt", "")
    write(corpus, "blank.md", "   \n\t\n")
    write(corpus, "binary.txt", b"abc\x00\x01\x02def")
    write(corpus, "latin1.txt", "caf\xe9 au lait".encode("latin-1"))
    write(corpus, "broken.pdf", make_pdf("whatever")[:150])
    write(corpus, "notes.docx", b"PK\x03\x04")
    write(corpus, "empty_page.html", "<html><script>only()</script></html>")
    write(corpus, ".hidden.txt", "hidden files are skipped")
    docs, rejected = ingest(CorpusParams(dir=str(corpus)))
    assert docs.height == 5  # the five good files survive
    reasons = dict(zip([Path(p).name for p in rejected["path"]], rejected["reason"], strict=True))
    assert reasons["empty.txt"].startswith("empty")
    assert reasons["blank.md"].startswith("empty")
    assert reasons["binary.txt"].startswith("binary")
    assert reasons["latin1.txt"] == "undecodable: not valid UTF-8 (byte 0xe9 at offset 3)"
    assert reasons["broken.pdf"].startswith("unparsable pdf")
    assert reasons["notes.docx"] == "unsupported extension '.docx'"
    assert reasons["empty_page.html"].startswith("empty")
    assert ".hidden.txt" not in reasons
    assert set(reasons) == {
        "empty.txt", "blank.md", "binary.txt", "latin1.txt", "broken.pdf", "notes.docx",
        "empty_page.html",
    }  # fmt: skip
    logged = " ".join(r.getMessage() for r in caplog.records if r.levelname == "WARNING")
    for name in reasons:
        assert name in logged


def test_pdf_parser_raising_indexerror_becomes_a_rejected_row_with_type_and_message(
    corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pypdf can fail on malformed files with errors outside its own hierarchy (IndexError ...)."""
    import pypdf

    def broken_reader(*_a: object, **_k: object) -> None:
        raise IndexError("list index out of range\nin xref")

    monkeypatch.setattr(pypdf, "PdfReader", broken_reader)
    docs, rejected = ingest(CorpusParams(dir=str(corpus)))
    assert docs.height == 4  # the four non-pdf files survive
    assert [Path(p).name for p in rejected["path"]] == ["e.pdf"]
    assert rejected["reason"].to_list() == [
        "unparsable pdf: IndexError: list index out of range in xref"
    ]


def test_any_unexpected_parser_error_becomes_a_rejected_row(
    corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stage loop turns every Exception from one file into a row (never aborts the ingest)."""
    import ragcourt.corpus.formats as formats_mod

    def boom(_raw: str, _budget: object = None) -> None:
        raise AssertionError("parser invariant broken")

    monkeypatch.setattr(formats_mod, "parse_html", boom)
    docs, rejected = ingest(CorpusParams(dir=str(corpus)))
    assert docs.height == 4
    assert rejected["reason"].to_list() == ["unparsable: AssertionError: parser invariant broken"]
    assert [Path(p).name for p in rejected["path"]] == ["d.html"]


def test_exact_duplicates_are_flagged_and_keep_the_first(tmp_path: Path) -> None:
    root = tmp_path / "c"
    write(root, "1_orig.txt", "Same text here.\n")
    write(root, "2_copy.txt", "Same text here.\r\n")  # identical after normalisation
    write(root, "3_copy.md", "Same text here.")
    write(root, "4_other.txt", "Different text.")
    docs, _ = ingest(CorpusParams(dir=str(root)))
    first = doc_hash("Same text here.")
    assert docs["doc_id"].to_list() == [first, f"{first}-dup2", f"{first}-dup3", doc_hash(
        "Different text.")]  # fmt: skip
    assert docs["duplicate_of"].to_list() == [None, first, first, None]
    assert docs["doc_id"].is_unique().all()


def test_zero_usable_documents_is_a_clear_error(tmp_path: Path) -> None:
    root = tmp_path / "c"
    write(root, "a.txt", "")
    write(root, "b.bin", b"\x00\x01")
    with pytest.raises(RagcourtError, match=r"no usable documents \(2 rejected: .*a.txt: empty"):
        ingest(CorpusParams(dir=str(root)))
    with pytest.raises(RagcourtError, match="folder not found"):
        ingest(CorpusParams(dir=str(tmp_path / "missing")))


def test_stage_main_exits_2_with_one_line_and_writes_nothing(tmp_path: Path) -> None:
    write(tmp_path, "params.yaml", "corpus: {dir: nothing_here}\n")
    proc = subprocess.run(
        [sys.executable, "-m", "stages", "ingest", "--params", "params.yaml"],
        cwd=tmp_path, capture_output=True, text=True,
        env=_env(),
    )  # fmt: skip
    assert proc.returncode == 2
    err_lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("ragcourt: error:")]
    assert err_lines == ["ragcourt: error: corpus.dir 'nothing_here': folder not found"]
    assert not (tmp_path / "data").exists()


def test_stage_writes_both_tables(tmp_path: Path, corpus: Path) -> None:
    write(corpus, "bad.txt", b"\xff\xfe\x00")
    write(tmp_path, "params.yaml", f"corpus: {{dir: {corpus}}}\n")
    proc = subprocess.run(
        [sys.executable, "-m", "stages", "ingest"],
        cwd=tmp_path, capture_output=True, text=True,
        env=_env(),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    docs = pl.read_parquet(tmp_path / "data/documents.parquet")
    rej = pl.read_parquet(tmp_path / "data/rejected_documents.parquet")
    assert docs.height == 5 and rej["reason"].to_list() == ["binary: NUL byte in the first 8 KiB"]


def test_html_block_elements_break_lines() -> None:
    parsed = parse_html("<div>one</div><div>two<br>three</div><ul><li>a</li><li>b</li></ul>")
    assert parsed.text.split() == ["one", "two", "three", "a", "b"]
    assert "one\n" in parsed.text and parsed.title is None


def _env() -> dict[str, str]:
    import os

    env = dict(os.environ)
    repo = str(Path(__file__).resolve().parents[3])
    env["PYTHONPATH"] = repo + os.pathsep + env.get("PYTHONPATH", "")
    return env
