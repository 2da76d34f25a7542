"""Content fingerprints: file/folder/object sha256, the in-process and the on-disk memo."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from ragcourt.core import fingerprint
from ragcourt.core.fingerprint import (
    MISSING,
    cache_root,
    file_sha256,
    object_sha256,
    path_sha256,
    remember,
)


def _no_hashing(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Make re-hashing a file fail loudly; returns the paths it was asked to hash."""
    calls: list[Path] = []

    def refuse(path: Path) -> str:
        calls.append(path)
        return "re-hashed"

    monkeypatch.setattr(fingerprint, "hash_file_bytes", refuse)
    return calls


def test_cache_root_follows_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RAGCOURT_HOME", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "ragcourt"
    monkeypatch.setenv("RAGCOURT_HOME", str(tmp_path / "home"))
    assert cache_root() == tmp_path / "home"


def test_file_sha256_is_the_sha256_of_the_bytes_and_memoised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    f = tmp_path / "a.bin"
    f.write_bytes(b"x" * 3_000_000)  # several 1 MiB blocks
    digest = hashlib.sha256(f.read_bytes()).hexdigest()
    assert file_sha256(f) == digest
    calls = _no_hashing(monkeypatch)
    assert file_sha256(f) == digest and calls == []  # memo hit
    f.write_bytes(b"y")  # new size/mtime: hashed again
    assert file_sha256(f) == "re-hashed" and calls == [f]


def test_persisted_digest_survives_a_new_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGCOURT_HOME", str(tmp_path / "home"))
    f = tmp_path / "model.gguf"
    f.write_bytes(b"GGUF" + b"z" * 1000)
    digest = hashlib.sha256(f.read_bytes()).hexdigest()
    assert file_sha256(f, persist=True) == digest
    st = f.stat()
    memo = json.loads((tmp_path / "home" / "sha256.json").read_text(encoding="utf-8"))
    assert memo == {f"{f.resolve()}|{st.st_size}|{st.st_mtime_ns}": digest}
    monkeypatch.setattr(fingerprint, "_memo", {})  # a later process: empty in-process memo
    calls = _no_hashing(monkeypatch)
    assert file_sha256(f, persist=True) == digest and calls == []
    monkeypatch.setattr(fingerprint, "_memo", {})
    assert file_sha256(f) == "re-hashed"  # without persist the disk memo is not read


def test_remember_records_a_digest_computed_elsewhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGCOURT_HOME", str(tmp_path / "home"))
    f = tmp_path / "assembled.gguf"
    f.write_bytes(b"parts")
    remember(f, "d" * 64, persist=True)
    monkeypatch.setattr(fingerprint, "_memo", {})
    calls = _no_hashing(monkeypatch)
    assert file_sha256(f, persist=True) == "d" * 64 and calls == []


def test_folder_digest_sees_content_and_names_not_temp_files(tmp_path: Path) -> None:
    d = tmp_path / "corpus"
    d.mkdir()
    (d / "a.txt").write_text("alpha")
    first = path_sha256(d)
    pairs = f"a.txt\0{hashlib.sha256(b'alpha').hexdigest()}\n"
    assert first == hashlib.sha256(pairs.encode()).hexdigest()
    (d / ".a.txt.tmp").write_text("half-written")
    assert path_sha256(d) == first
    (d / "a.txt").write_text("alpha!")
    assert path_sha256(d) != first
    (d / "a.txt").write_text("alpha")
    (d / "a.txt").rename(d / "b.txt")
    assert path_sha256(d) != first
    assert path_sha256(tmp_path / "absent") == MISSING


def test_object_sha256_is_sorted_json() -> None:
    obj = {"b": [1, 2.5, None], "a": {"y": "é", "x": True}}
    expected = hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()
    assert object_sha256(obj) == expected
    assert object_sha256({"a": {"x": True, "y": "é"}, "b": [1, 2.5, None]}) == expected
    assert object_sha256({"p": Path("x/y")}) == object_sha256({"p": "x/y"})
