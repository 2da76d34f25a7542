"""A parser process for the ingest stage: each file is parsed there, and the process is killed
when a file takes longer than its time budget (``corpus.file_timeout_s``) or needs more memory
than ``corpus.parse_memory_mb`` beyond what it started with. The file is then a rejected row
and the next file gets a fresh process, so no file can hang or exhaust the stage.

The process is forked from the stage (no re-import, one per stage run, not per file); it
receives ``(bytes, format, budget)`` and answers with the parsed file (normalised text, title,
headings, source map), or the reason the file is rejected
(:func:`ragcourt.corpus.formats.parse_bytes`).
"""

from __future__ import annotations

import multiprocessing
import os
import resource
import signal
from multiprocessing.connection import Connection
from typing import Any

from ragcourt.core.errors import RagcourtError
from ragcourt.corpus.formats import Budget, Parsed, Rejected, exception_line, parse_bytes

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _address_space() -> int | None:
    """This process's virtual memory size in bytes (None where /proc is not available)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[0]) * _PAGE
    except (OSError, ValueError, IndexError):
        return None


def _limit_memory(extra_bytes: int) -> None:
    """Cap this process's address space at its current size plus ``extra_bytes``."""
    now = _address_space()
    if now is None:
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = now + extra_bytes
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    if soft == resource.RLIM_INFINITY or cap < soft:
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))


def _serve(conn: Connection, other_end: Connection, memory_bytes: int) -> None:
    """The worker loop: parse each request until the stage closes its end of the pipe."""
    other_end.close()  # the stage's end, inherited by the fork: else closing it is no EOF here
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the stage, which ends us
    _limit_memory(memory_bytes)
    while True:
        try:
            data, fmt, budget = conn.recv()
        except (EOFError, OSError):
            return
        reply: tuple[str, Any]
        try:
            reply = ("ok", parse_bytes(data, fmt, budget))
        except Rejected as why:
            reply = ("rejected", str(why))
        except MemoryError:
            reply = ("rejected", "too large: parsing needed over corpus.parse_memory_mb")
        except Exception as err:  # one bad file never aborts the ingest
            reply = ("error", exception_line(err))
        del data
        try:
            conn.send(reply)
        except MemoryError:
            conn.send(("rejected", "too large: parsing needed over corpus.parse_memory_mb"))


class ParseWorker:
    """Parses files in a forked process with a time and memory budget (module docstring);
    use as a context manager, or call :meth:`close`."""

    def __init__(self, timeout_s: float, memory_mb: int) -> None:
        self.timeout_s = timeout_s
        self.memory_mb = memory_mb
        self._proc: Any = None
        self._conn: Connection | None = None

    def __enter__(self) -> ParseWorker:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close(kill=False)

    def _start(self) -> Connection:
        if self._conn is not None and self._proc is not None and self._proc.is_alive():
            return self._conn
        self.close()
        if multiprocessing.current_process().daemon:  # multiprocessing forbids its children
            raise RagcourtError(
                "ingest: cannot start its parser process inside a daemonic process (a Dask "
                "worker under a nanny): start the workers with "
                "DASK_DISTRIBUTED__WORKER__DAEMON=False, or run ingest outside Dask"
            )
        ctx = multiprocessing.get_context("fork")
        parent, child = ctx.Pipe(duplex=True)
        proc = ctx.Process(
            target=_serve, args=(child, parent, self.memory_mb * 1024 * 1024), daemon=True
        )
        proc.start()
        child.close()
        self._proc, self._conn = proc, parent
        return parent

    def _died(self) -> Rejected:
        """Why the worker stopped without a reply (it is reaped; the next file gets another)."""
        proc = self._proc
        self.close()
        code = proc.exitcode if proc is not None else None
        if code is not None and code < 0:
            name = signal.Signals(-code).name if -code in signal.valid_signals() else str(-code)
            how = f"was killed by signal {name}"
        else:
            how = f"exited with code {code}"
        return Rejected(
            f"unparsable: the parser process {how} (over corpus.parse_memory_mb "
            f"({self.memory_mb:,} MB)?)"
        )

    def parse(self, data: bytes, fmt: str, budget: Budget) -> Parsed:
        """The parsed file (:func:`~ragcourt.corpus.formats.parse_bytes`); Rejected past a
        budget or on any parser failure (the worker is replaced after a timeout or a crash)."""
        conn = self._start()
        try:
            conn.send((data, fmt, budget))
            ready = conn.poll(self.timeout_s)
        except (BrokenPipeError, ConnectionResetError, EOFError):
            raise self._died() from None
        if not ready:
            self.close()
            raise Rejected(
                f"too slow: not parsed within corpus.file_timeout_s ({self.timeout_s:g} s)"
            )
        try:
            kind, answer = conn.recv()
        except (EOFError, ConnectionResetError, OSError):
            raise self._died() from None
        if kind == "ok" and isinstance(answer, Parsed):
            return answer
        if kind == "rejected":
            raise Rejected(str(answer))
        raise Rejected(f"unparsable: {answer}")

    def close(self, kill: bool = True) -> None:
        """Stop the worker: killed (``kill``, e.g. busy past its deadline), or told to end by
        closing its pipe; idempotent."""
        conn, proc = self._conn, self._proc
        self._conn = self._proc = None
        if conn is not None:
            conn.close()
        if proc is not None:
            if not kill:
                proc.join(timeout=2)
            if proc.is_alive():
                proc.kill()
            proc.join(timeout=10)
            proc.close()
