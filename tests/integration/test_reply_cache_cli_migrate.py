"""`ragcourt cache stats|clear|verify|migrate` on damaged caches and old diskcache folders."""

from __future__ import annotations

import pickle
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import diskcache
import pytest
from _llm_testing import scripted_model
from typer.testing import CliRunner

from ragcourt.cli.cache_cmd import app as cache_app
from ragcourt.llm import ChatRequest, Gateway
from ragcourt.llm.accounting import reset_accounts
from ragcourt.llm.cache import ReplyCache, cache_key
from ragcourt.llm.params import LLMParams

runner = CliRunner()


class Payload:
    """Unpickling this runs ``open(marker, "w")``: creates the marker file (a planted payload)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (open, (str(self.marker), "w"))


def _plant(folder: Path, key: str, payload: object) -> None:
    """Store ``payload`` the way the old code did (diskcache, pickled values)."""
    old = diskcache.Cache(str(folder), size_limit=16 * 2**30)
    old.set(key, payload)
    old.close()


def _cli(*args: str) -> Any:
    out = runner.invoke(cache_app, list(args))
    assert out.exception is None or isinstance(out.exception, SystemExit), out.exception
    assert "Traceback" not in out.output
    return out


def _reply(text: str, **kw: Any) -> dict[str, Any]:
    return {"text": text, "prompt_tokens": 7, "completion_tokens": 3, "cost_usd": 0.0, **kw}


@pytest.fixture
def params(tmp_path: Path) -> Iterator[LLMParams]:
    reset_accounts()
    yield LLMParams(cache_dir=str(tmp_path / "cache"), metrics_dir=str(tmp_path / "metrics"))
    reset_accounts()


def test_planted_pickle_payload_never_runs_gateway_or_migrate_scripted_model(
    params: LLMParams, tmp_path: Path
) -> None:
    live = tmp_path / "live-marker"
    pickle.loads(pickle.dumps(Payload(live))).close()  # the payload is real: unpickling runs it
    assert live.exists()
    marker = tmp_path / "marker"
    folder = Path(params.cache_dir)
    with scripted_model("planted", "real reply") as m:
        req = ChatRequest.of(m.model, None, "hello")
        _plant(folder, cache_key(req), Payload(marker))  # inline pickle blob
        _plant(folder, f"{1:064x}", {"text": "x" * 40_000, "p": Payload(marker)})  # a .val file
        assert list(folder.glob("*/*/*.val"))
        [res] = Gateway(params, stage="t_planted").chat([req])
        assert res.ok and res.text == "real reply" and len(m.calls) == 1
    assert not marker.exists()
    out = _cli("migrate", "--cache-dir", str(folder))
    assert out.exit_code == 0, out.output
    assert "refused (needs a global): 2" in out.output and "imported: 0" in out.output
    assert not marker.exists()
    assert not (folder / "cache.db").exists()  # moved aside


def test_migrate_round_trip_from_a_real_diskcache_folder_scripted_model(
    params: LLMParams,
) -> None:
    folder = Path(params.cache_dir)
    lp = [{"token": "A", "logprob": -0.1, "top_logprobs": [{"token": "B", "logprob": -2.5}]}]
    with scripted_model("migrated", "live reply") as m:
        req = ChatRequest.of(m.model, None, "cached question")
        good = {
            cache_key(req): _reply("from the old cache", finish_reason="stop"),
            f"{2:064x}": _reply(
                "with logprobs", logprobs=lp, candidate_logprobs={"A": ["A", -0.1]}
            ),
            f"{3:064x}": _reply("y" * 50_000),  # large: diskcache keeps it in a .val file
        }
        old = diskcache.Cache(str(folder), size_limit=16 * 2**30)
        for key, value in good.items():
            old.set(key, value)
        old.set(f"{4:064x}", {"prompt_tokens": 1})  # no text
        old.set("not-a-hash", _reply("foreign key"))
        old.set(f"{5:064x}", "a plain string")
        old.close()
        out = _cli("migrate", "--cache-dir", str(folder))
        assert out.exit_code == 0, out.output
        for line in ("rows: 6", "imported: 3", "refused (needs a global): 0", "invalid: 3"):
            assert line in out.output
        cache = ReplyCache(folder)
        for key, value in good.items():
            hit = cache.get(key)
            assert hit is not None
            assert {k: hit[k] for k in value} == value
        cache.close()
        assert not (folder / "cache.db").exists() and list(folder.glob("legacy-diskcache-*.db"))
        [res] = Gateway(params, stage="t_migrated").chat([req])
    assert res.ok and res.cached and res.text == "from the old cache" and not m.calls
    again = _cli("migrate", "--cache-dir", str(folder))
    assert again.exit_code == 2 and "no old diskcache file" in again.output


def test_migrate_of_a_garbage_old_file_is_one_line_error(tmp_path: Path) -> None:
    (tmp_path / "cache.db").write_bytes(b"garbage" * 100)
    out = _cli("migrate", "--cache-dir", str(tmp_path))
    assert out.exit_code == 2 and "cache.db" in out.output and "not a readable" in out.output


def _damaged_file(folder: Path) -> Path:
    cache = ReplyCache(folder)
    cache.set(f"{1:064x}", _reply("one"))
    cache.close()
    cache.path.write_bytes(b"\x00garbage" * 512)
    return cache.path


def test_cli_stats_verify_clear_on_a_damaged_file(tmp_path: Path) -> None:
    path = _damaged_file(tmp_path / "c")
    out = _cli("stats", "--cache-dir", str(tmp_path / "c"))
    assert out.exit_code == 0 and "damaged" in out.output and "entries: 0" in out.output
    assert path.read_bytes().startswith(b"\x00garbage")  # stats does not move anything
    out = _cli("verify", "--cache-dir", str(tmp_path / "c"))
    assert out.exit_code == 1 and "damaged file" in out.output
    out = _cli("verify", "--cache-dir", str(tmp_path / "c"), "--repair")
    assert out.exit_code == 0 and "moved to" in out.output
    assert len(list((tmp_path / "c").glob("damaged-*.db"))) == 1
    assert _cli("verify", "--cache-dir", str(tmp_path / "c")).exit_code == 0
    _damaged_file(tmp_path / "d")
    out = _cli("clear", "--cache-dir", str(tmp_path / "d"), "--yes")
    assert (
        out.exit_code == 0
        and "removed 0" in out.output
        and "damaged cache file moved" in out.output
    )


def test_cli_verify_finds_and_repairs_damaged_entries(tmp_path: Path) -> None:
    cache = ReplyCache(tmp_path / "c")
    cache.set(f"{1:064x}", _reply("fine"))
    cache.close()
    conn = sqlite3.connect(str(cache.path))
    conn.execute("INSERT INTO replies VALUES (?, ?)", (f"{2:064x}", '{"usage": 1}'))
    conn.execute("INSERT INTO replies VALUES (?, ?)", ("../../etc", '{"text": "x"}'))
    conn.commit()
    conn.close()
    out = _cli("verify", "--cache-dir", str(tmp_path / "c"))
    assert (
        out.exit_code == 1 and "entries ok: 1" in out.output and "entries damaged: 2" in out.output
    )
    out = _cli("verify", "--cache-dir", str(tmp_path / "c"), "--repair")
    assert out.exit_code == 0 and "entries removed: 2" in out.output
    out = _cli("verify", "--cache-dir", str(tmp_path / "c"))
    assert out.exit_code == 0 and "entries damaged: 0" in out.output
