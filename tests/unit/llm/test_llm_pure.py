"""Pure parts of the gateway: cache keys, JSON extraction, next-token maths, GGUF checks."""

from __future__ import annotations

import hashlib
import math
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel
from typer.testing import CliRunner

from ragcourt.cli.cache_cmd import app as cache_app
from ragcourt.core import fingerprint
from ragcourt.core.errors import ConfigError
from ragcourt.core.model_registry import LLMEntry
from ragcourt.llm import gguf_files
from ragcourt.llm.cache import ReplyCache, cache_key
from ragcourt.llm.next_token import from_candidate_logprobs, from_top_logprobs
from ragcourt.llm.structured import ReplyParseError, first_json_object, parse_reply
from ragcourt.llm.types import ChatRequest, PositionLogprobs, TokenLogprob

BASE = ChatRequest.of("openai/gpt-4o-mini", "sys", "user", max_tokens=32, temperature=0.0)


@pytest.mark.parametrize(
    "change",
    [
        {"model": "openai/gpt-4o"},
        {"messages": (("system", "sys"), ("user", "user!"))},
        {"messages": (("user", "sys"), ("user", "user"))},
        {"temperature": 0.7},
        {"max_tokens": 33},
        {"seed": 1},
        {"seed": None},
        {"stop": ("\n",)},
        {"top_logprobs": 5},
        {"json_mode": True},
    ],
)
def test_cache_key_changes_with_every_reply_relevant_field(change: dict[str, object]) -> None:
    assert cache_key(BASE) != cache_key(BASE.model_copy(update=change))


def test_cache_key_ignores_tag_and_covers_extras() -> None:
    assert cache_key(BASE) == cache_key(BASE.model_copy(update={"tag": "qagen.question"}))
    assert cache_key(BASE) != cache_key(BASE, {"candidates": ["A", "B"]})
    assert cache_key(BASE, {"candidates": ["A", "B"]}) != cache_key(
        BASE, {"candidates": ["B", "A"]}
    )


def test_reply_cache_roundtrip_stats_and_cli(tmp_path: Path) -> None:
    cache = ReplyCache(tmp_path / "c")
    assert cache.get("k") is None
    cache.set("k", {"text": "hi"})
    hit = cache.get("k")
    assert hit is not None and hit["text"] == "hi" and hit["prompt_tokens"] == 0
    assert cache.stats()["entries"] == 1
    cache.close()
    runner = CliRunner()
    out = runner.invoke(cache_app, ["stats", "--cache-dir", str(tmp_path / "c")])
    assert out.exit_code == 0 and "entries: 1" in out.output
    out = runner.invoke(cache_app, ["clear", "--cache-dir", str(tmp_path / "c"), "--yes"])
    assert out.exit_code == 0 and "removed 1" in out.output
    assert ReplyCache(tmp_path / "c").stats()["entries"] == 0
    bad = runner.invoke(cache_app, ["stats", "--params", str(tmp_path / "missing.yaml")])
    assert bad.exit_code == 2 and "params file not found" in bad.output


class Item(BaseModel):
    score: float


def test_json_extraction_is_lenient_but_validates() -> None:
    assert first_json_object('noise {bad json} then {"score": 1} {"score": 2}') == {"score": 1}
    assert parse_reply('```json\n{"score": 0.5}\n```', Item) == Item(score=0.5)
    with pytest.raises(ReplyParseError, match="no JSON object"):
        parse_reply("[1, 2]", Item)
    with pytest.raises(ReplyParseError, match="score"):
        parse_reply('{"score": "high"}', Item)


def _pos(pairs: list[tuple[str, float]]) -> PositionLogprobs:
    tops = [TokenLogprob(token=t, logprob=math.log(p)) for t, p in pairs]
    return PositionLogprobs(token=tops[0].token, logprob=tops[0].logprob, top_logprobs=tops)


def test_top_logprobs_matching_rules() -> None:
    top = [("NO", 0.4), ("YES", 0.3), (" ", 0.2), ("Y", 0.05), ("No", 0.05)]
    d = from_top_logprobs(["NO-RESPONSE", "YES"], _pos(top), "m", False)
    # prefix match after strip, case-sensitive; a token's probability counts once
    assert d.raw == pytest.approx({"NO-RESPONSE": 0.4, "YES": 0.35})
    assert d.fallback == [] and sum(d.probs.values()) == pytest.approx(1.0)
    amb = from_top_logprobs(["NO", "NOT"], _pos([("NO", 0.5), ("N", 0.3), ("x", 0.2)]), "m", False)
    # "NO" is exact for NO; "N" fits both -> ignored; NOT unlisted -> min listed prob
    assert amb.raw == pytest.approx({"NO": 0.5, "NOT": 0.2}) and amb.fallback == ["NOT"]
    assert not from_top_logprobs(["A"], None, "m", False).ok


def test_exact_candidate_distribution() -> None:
    d = from_candidate_logprobs(
        ["A", "B"], {"A": ("A", math.log(0.3)), "B": ("B", math.log(0.1))}, "m", True
    )
    assert d.ok and d.probs == pytest.approx({"A": 0.75, "B": 0.25}) and d.cached
    assert not from_candidate_logprobs(["A", "C"], {"A": ("A", 0.0)}, "m", False).ok


def _entry(**kw: object) -> LLMEntry:
    return LLMEntry.model_validate({"sha256": "0" * 64, **kw})


def test_gguf_sha256_is_checked_and_memoised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGCOURT_HOME", str(tmp_path / "home"))
    f = tmp_path / "m.gguf"
    f.write_bytes(b"GGUF" + b"x" * 1000)
    good = hashlib.sha256(f.read_bytes()).hexdigest()
    assert gguf_files.resolve_gguf("m", _entry(source="path", path=str(f), sha256=good)) == f
    with pytest.raises(ConfigError, match="has sha256"):
        gguf_files.resolve_gguf("m", _entry(source="path", path=str(f)))
    # the digest is persisted for later processes (fresh in-process memo, no re-hashing)
    monkeypatch.setattr(fingerprint, "_memo", {})
    calls: list[tuple[object, ...]] = []

    def no_hashing(*a: object) -> None:
        calls.append(a)

    monkeypatch.setattr(hashlib, "sha256", no_hashing)
    assert fingerprint.file_sha256(f, persist=True) == good and calls == []


def test_fake_gguf_parts_with_wrong_sha256_are_refused_and_leave_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGCOURT_HOME", str(tmp_path / "home"))
    site = tmp_path / "site"
    for i, chunk in enumerate([b"GGUF-one|", b"two"], start=1):
        pkg = site / f"fake_gguf_bad_{i}"
        pkg.mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "p").write_bytes(chunk)
    monkeypatch.syspath_prepend(str(site))
    wrong = hashlib.sha256(b"GGUF-two|one").hexdigest()  # parts in the other order
    entry = _entry(source="parts", sha256=wrong, parts=["fake_gguf_bad_1:p", "fake_gguf_bad_2:p"])
    with pytest.raises(ConfigError) as info:
        gguf_files.resolve_gguf("fake", entry)
    msg = str(info.value)
    assert "\n" not in msg
    assert f"concatenate to sha256 {hashlib.sha256(b'GGUF-one|two').hexdigest()}" in msg
    assert f"registry says {wrong}" in msg
    models = tmp_path / "home" / "models"
    assert list(models.iterdir()) == []  # neither <sha>.gguf nor a temp file


def test_gguf_parts_are_assembled_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGCOURT_HOME", str(tmp_path / "home"))
    site = tmp_path / "site"
    for i, chunk in enumerate([b"GGUF-part-one|", b"part-two"], start=1):
        pkg = site / f"fake_gguf_part_{i}"
        pkg.mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "model.gguf.part").write_bytes(chunk)
    monkeypatch.syspath_prepend(str(site))
    digest = hashlib.sha256(b"GGUF-part-one|part-two").hexdigest()
    entry = _entry(
        source="parts",
        sha256=digest,
        parts=["fake_gguf_part_1:model.gguf.part", "fake_gguf_part_2:model.gguf.part"],
    )
    path = gguf_files.resolve_gguf("fake", entry)
    assert path.read_bytes() == b"GGUF-part-one|part-two"
    assert path.name == f"{digest}.gguf"
    assert "fake_gguf_part_1" not in sys.modules  # located, never imported
    path.write_bytes(b"GGUF-corrupted-cache")  # a stale corrupt cache file is re-assembled
    assert gguf_files.resolve_gguf("fake", entry).read_bytes() == b"GGUF-part-one|part-two"
    missing = _entry(
        source="package",
        package="no_such_pkg_xyz",
        filename="m.gguf",
        install_hint="pip install no-such-pkg",
    )
    with pytest.raises(ConfigError, match=r"not installed.*pip install no-such-pkg"):
        gguf_files.resolve_gguf("x", missing)
