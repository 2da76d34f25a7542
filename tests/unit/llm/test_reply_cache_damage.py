"""The JSON reply store survives damage: bad files are moved aside, bad entries are misses."""

from __future__ import annotations

import json
import logging
import pickle
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from _llm_testing import scripted_model

from ragcourt.llm import ChatRequest, Gateway
from ragcourt.llm.accounting import reset_accounts
from ragcourt.llm.cache import ReplyCache, cache_key
from ragcourt.llm.params import LLMParams


def _reply(i: int) -> dict[str, object]:
    return {"text": f"reply {i} " + "x" * 2000, "prompt_tokens": i, "completion_tokens": 2}


def _filled(folder: Path, n: int = 200) -> ReplyCache:
    cache = ReplyCache(folder)
    for i in range(n):
        cache.set(f"{i:064x}", _reply(i))
    cache.close()  # the last connection checkpoints the WAL into the main file
    return cache


def _raw_put(path: Path, key: str, value: object) -> None:
    conn = sqlite3.connect(str(path))
    conn.execute("INSERT OR REPLACE INTO replies (key, value) VALUES (?, ?)", (key, value))
    conn.commit()
    conn.close()


@pytest.fixture
def params(tmp_path: Path) -> Iterator[LLMParams]:
    reset_accounts()
    yield LLMParams(cache_dir=str(tmp_path / "cache"), metrics_dir=str(tmp_path / "metrics"))
    reset_accounts()


def _assert_rebuilt(folder: Path, caplog: pytest.LogCaptureFixture) -> None:
    cache = ReplyCache(folder)
    with caplog.at_level(logging.WARNING, logger="ragcourt.llm.cache"):
        assert cache.get(f"{1:064x}") is None  # no exception: a miss
    [moved] = cache.moved_aside
    assert moved.parent == folder and moved.name.startswith("damaged-") and moved.is_file()
    assert any(str(moved) in r.getMessage() for r in caplog.records)
    cache.set(f"{1:064x}", _reply(1))  # the fresh store works
    hit = cache.get(f"{1:064x}")
    assert hit is not None and hit["prompt_tokens"] == 1
    cache.close()


def test_truncated_store_is_moved_aside_and_rebuilt(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cache = _filled(tmp_path / "c")
    size = cache.path.stat().st_size
    assert size > 100_000
    with cache.path.open("r+b") as fh:
        fh.truncate(size // 2)
    _assert_rebuilt(tmp_path / "c", caplog)


def test_garbage_overwritten_store_is_moved_aside_and_rebuilt(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cache = _filled(tmp_path / "c", n=5)
    cache.path.write_bytes(b"this is not a database\n" * 400)
    _assert_rebuilt(tmp_path / "c", caplog)


def test_store_with_a_foreign_schema_is_moved_aside(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "c"
    folder.mkdir()
    conn = sqlite3.connect(str(folder / "replies.sqlite3"))
    conn.execute("CREATE TABLE replies (k BLOB, v BLOB, extra INTEGER)")
    conn.commit()
    conn.close()
    _assert_rebuilt(folder, caplog)


def test_bad_entries_are_misses_deleted_and_counted(tmp_path: Path) -> None:
    cache = _filled(tmp_path / "c", n=3)
    bad = {
        f"{10:064x}": '{"prompt_tokens": 3}',  # no text
        f"{11:064x}": "{not json",
        f"{12:064x}": '{"text": 5}',
        f"{13:064x}": pickle.dumps({"text": "pickled"}),  # a blob is never unpickled
        f"{14:064x}": '{"text": "hi", "prompt_tokens": -1}',
    }
    for key, value in bad.items():
        _raw_put(cache.path, key, value)
    fresh = ReplyCache(tmp_path / "c")
    for key in bad:
        assert fresh.get(key) is None
    assert fresh.damaged_entries == len(bad)
    assert fresh.get(f"{0:064x}") is not None  # good entries untouched
    assert fresh.stats()["entries"] == 3  # the damaged ones were deleted
    fresh.close()


def test_entry_without_text_is_a_miss_then_replaced_scripted_model(params: LLMParams) -> None:
    with scripted_model("cachetext", "fresh reply") as m:
        req = ChatRequest.of(m.model, None, "hello")
        gw = Gateway(params, stage="t_cache_text")
        gw.cache.set(cache_key(req), {"text": "placeholder"})  # creates the store
        _raw_put(gw.cache.path, cache_key(req), json.dumps({"prompt_tokens": 3}))
        [res] = gw.chat([req])
        assert res.ok and res.text == "fresh reply" and not res.cached
        assert len(m.calls) == 1 and gw.cache.damaged_entries == 1
        [again] = Gateway(params, stage="t_cache_text2").chat([req])
    assert again.ok and again.cached and again.text == "fresh reply" and len(m.calls) == 1


def test_same_request_twice_in_one_batch_calls_the_model_once_scripted_model(
    params: LLMParams,
) -> None:
    with scripted_model("cacheclaim", "once", delay_s=0.2) as m:
        req = ChatRequest.of(m.model, None, "same question")
        results = Gateway(params, stage="t_claim").chat([req, req, req])
    assert [r.text for r in results] == ["once"] * 3 and all(r.ok for r in results)
    assert len(m.calls) == 1 and sum(r.cached for r in results) == 2
    assert not list((Path(params.cache_dir) / "inflight").glob("*.lock"))  # claims released


def test_unusable_cache_folder_turns_the_cache_off_without_raising(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache folder should be")
    cache = ReplyCache(blocker / "cache")
    cache.set(f"{1:064x}", {"text": "x"})
    assert cache.get(f"{1:064x}") is None
    assert cache.clear() == 0


def test_out_of_range_log_probabilities_and_deep_values_are_damage(tmp_path: Path) -> None:
    """A stored log-probability above 0 or NaN, or a value nested past the JSON depth bound,
    is a counted miss (no crash, no RecursionError), and ``verify`` finds it first."""
    cache = _filled(tmp_path / "c", n=2)
    pos = {"token": "A", "logprob": -0.1, "top_logprobs": [{"token": "A", "logprob": 5.0}]}
    bad = {
        f"{20:064x}": json.dumps({"text": "A", "logprobs": [pos]}),
        f"{21:064x}": '{"text": "A", "logprobs": [{"token": "A", "logprob": NaN}]}',
        f"{22:064x}": json.dumps({"text": "A", "candidate_logprobs": {"A": ["A", 0.7]}}),
        f"{23:064x}": '{"text": "A", "x": ' + "[" * 100_000 + "]" * 100_000 + "}",
    }
    for key, value in bad.items():
        _raw_put(cache.path, key, value)
    report = ReplyCache(tmp_path / "c").verify()
    assert report.entries_damaged == len(bad) and report.entries_ok == 2
    fresh = ReplyCache(tmp_path / "c")
    for key in bad:
        assert fresh.get(key) is None
    assert fresh.damaged_entries == len(bad)
    ok = {"token": "A", "logprob": -float("inf"), "top_logprobs": [{"token": "A", "logprob": 0.0}]}
    fresh.set(f"{30:064x}", {"text": "A", "logprobs": [ok]})  # -inf and 0 are probabilities
    assert fresh.get(f"{30:064x}") is not None
    fresh.close()
