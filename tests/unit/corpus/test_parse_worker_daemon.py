"""Ingest inside a daemonic process (a Dask worker under a nanny) stops with one line naming
the fix, instead of rejecting every file as unparsable."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

from ragcourt.corpus.params import CorpusParams


def _ingest_in_daemon(corpus_dir: str, out: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    from ragcourt.core.errors import RagcourtError
    from ragcourt.corpus.ingest import ingest

    try:
        docs, _ = ingest(CorpusParams(dir=corpus_dir))
        out.put(("ok", docs.height))
    except RagcourtError as err:
        out.put(("error", str(err)))


def test_ingest_in_a_daemonic_process_is_one_line_naming_the_fix(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("Some text about harbours.", encoding="utf-8")
    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    proc = ctx.Process(target=_ingest_in_daemon, args=(str(tmp_path), out), daemon=True)
    proc.start()
    kind, message = out.get(timeout=120)
    proc.join(timeout=30)
    assert kind == "error", message
    assert "daemonic" in message and "DASK_DISTRIBUTED__WORKER__DAEMON=False" in message
    assert "\n" not in message
