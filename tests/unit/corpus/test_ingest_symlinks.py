"""Ingest never follows a symlink out of the corpus folder: real symlinks in
a tmp corpus. The old code read a link to /etc/passwd as a document, skipped dangling and
directory links silently (no rejected row) and recursed into directory links."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragcourt.corpus.ingest import ingest, list_files
from ragcourt.corpus.params import CorpusParams


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    (root / "sub").mkdir(parents=True)
    (root / "a.txt").write_text("Alpha document about rivers.\n\nMore text.", encoding="utf-8")
    (root / "sub" / "b.txt").write_text("Beta document about hills.", encoding="utf-8")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("SECRET outside the corpus", encoding="utf-8")
    return root


def reasons(root: Path) -> dict[str, str]:
    docs, rejected = ingest(CorpusParams(dir=str(root)))
    assert "SECRET" not in "".join(docs["text"].to_list())
    return {Path(p).relative_to(root).as_posix(): r for p, r in rejected.iter_rows()}


def test_symlink_to_file_outside_is_rejected(corpus: Path) -> None:
    """Old code: the outside file became a document."""
    (corpus / "leak.txt").symlink_to(corpus.parent / "outside" / "secret.txt")
    assert reasons(corpus) == {"leak.txt": "symlink outside the corpus folder"}


@pytest.mark.skipif(not Path("/etc/passwd").is_file(), reason="needs /etc/passwd")
def test_symlink_to_etc_passwd_is_rejected(corpus: Path) -> None:
    """Old code: /etc/passwd became a document."""
    (corpus / "passwd.txt").symlink_to("/etc/passwd")
    docs, rejected = ingest(CorpusParams(dir=str(corpus)))
    assert "root:" not in "".join(docs["text"].to_list())
    assert rejected.row(0) == (
        (corpus / "passwd.txt").as_posix(),
        "symlink outside the corpus folder",
    )


def test_dangling_and_looping_symlinks_are_rejected(corpus: Path) -> None:
    """Old code: no rejected row (and DVC then failed hashing the corpus)."""
    (corpus / "gone.txt").symlink_to(corpus / "missing.txt")
    (corpus / "loop.txt").symlink_to(corpus / "loop.txt")
    assert reasons(corpus) == {"gone.txt": "dangling symlink", "loop.txt": "dangling symlink"}


def test_directory_symlinks_are_rejected_and_not_descended(corpus: Path) -> None:
    """Old code: no rejected row for a directory link."""
    (corpus / "inner").symlink_to(corpus / "sub", target_is_directory=True)
    (corpus / "out").symlink_to(corpus.parent / "outside", target_is_directory=True)
    assert [p.relative_to(corpus).as_posix() for p in list_files(corpus)] == [
        "a.txt", "inner", "out", "sub/b.txt",
    ]  # fmt: skip
    assert reasons(corpus) == {
        "inner": "symlink to a directory",
        "out": "symlink outside the corpus folder",
    }


def test_symlink_to_file_inside_is_read_as_a_duplicate(corpus: Path) -> None:
    """A link to a file inside the corpus is read; its text is an exact duplicate."""
    (corpus / "z-link.txt").symlink_to(corpus / "a.txt")
    docs, rejected = ingest(CorpusParams(dir=str(corpus)))
    assert rejected.is_empty()
    link = docs.filter(docs["path"].str.ends_with("z-link.txt"))
    assert link.height == 1 and link["duplicate_of"][0] is not None


def test_corpus_dir_itself_may_be_a_symlink(corpus: Path, tmp_path: Path) -> None:
    linked = tmp_path / "linked-corpus"
    linked.symlink_to(corpus, target_is_directory=True)
    docs, rejected = ingest(CorpusParams(dir=str(linked)))
    assert docs.height == 2 and rejected.is_empty()
