"""Worker processes for ``kind: python`` systems (``isolation: process``, the default).

The user's callable never runs in the stage's process: a :class:`WorkerPool` keeps up to
``concurrency`` workers (``python -m ragcourt.answering.external.python_worker``), each
answering one question at a time. Whatever the callable does (``sys.exit``, ``os._exit(3)``, a
segfault, a hang, printing to stdout) costs at most the question in flight:

* a reply is a bounded :class:`~.replies.Reply` or a failure message, in length-prefixed
  pickle frames on the worker's original stdin / stdout (the worker points its fd 1 at
  stderr and fd 0 at ``/dev/null`` first, so user prints never reach the protocol);
* a question not answered within ``timeout_s`` kills the worker (SIGKILL):
  ``timed out after Ns (system process killed)``;
* a worker that dies mid-question fails it with ``system process exited with code N`` (or
  ``was killed by signal SIGSEGV``); the next question gets a fresh worker;
* a worker's start (import + ``init``) is bounded by ``start_timeout_s``; the first worker
  starts before any question, so a module that does not import is a one-line ConfigError.

Workers are killed when the pool closes, and (Linux) when the stage's process dies.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pickle
import signal
import struct
import sys
from pathlib import Path
from typing import Any, BinaryIO

from ragcourt.answering.external.calls import CallFailed
from ragcourt.answering.external.replies import Reply
from ragcourt.answering.external.specs import PythonSpec
from ragcourt.core.errors import ConfigError
from ragcourt.core.params import LimitsParams

_HEADER = struct.Struct("!Q")
_KILL_WAIT_S = 5.0


def _exit_text(code: int) -> str:
    """``exited with code 3`` / ``was killed by signal SIGSEGV`` for a return code."""
    if code >= 0:
        return f"exited with code {code}"
    try:
        name = signal.Signals(-code).name
    except ValueError:
        name = str(-code)
    return f"was killed by signal {name}"


class WorkerDied(Exception):
    """The worker process ended; ``code`` is its return code (negative: killed by signal)."""

    def __init__(self, code: int) -> None:
        super().__init__(f"system process {_exit_text(code)}")
        self.code = code


class _Worker:
    """One worker process and its protocol pipes (parent side)."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc

    @property
    def alive(self) -> bool:
        return self.proc.returncode is None

    async def request(self, message: dict[str, Any]) -> dict[str, Any]:
        """Send one frame and read the reply frame; :class:`WorkerDied` when the worker ends."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        try:
            self.proc.stdin.write(_HEADER.pack(len(data)) + data)
            await self.proc.stdin.drain()
            (size,) = _HEADER.unpack(await self.proc.stdout.readexactly(_HEADER.size))
            reply = pickle.loads(await self.proc.stdout.readexactly(size))
        except (asyncio.IncompleteReadError, ConnectionError, BrokenPipeError):
            raise WorkerDied(await self.proc.wait()) from None
        if not isinstance(reply, dict):
            raise WorkerDied(await self.kill())
        return reply

    async def kill(self) -> int:
        """Kill the worker (no-op when it already ended); its return code."""
        if self.alive:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()
        return await self.proc.wait()

    async def close(self) -> None:
        """Ask the worker to end (stdin closed), killing it when it does not."""
        if self.alive and self.proc.stdin is not None:
            self.proc.stdin.close()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.proc.wait(), _KILL_WAIT_S)
        await self.kill()


def _child_env() -> dict[str, str]:
    """The stage's environment, with ragcourt's own folder importable in the worker."""
    env = dict(os.environ)
    own = str(Path(__file__).resolve().parents[3])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (own, env.get("PYTHONPATH", "")) if p)
    return env


class WorkerPool:
    """Up to ``size`` worker processes answering for one Python system (module docstring)."""

    def __init__(self, spec: PythonSpec, limits: LimitsParams, where: str, size: int) -> None:
        self.spec, self.limits, self.where, self.size = spec, limits, where, size
        self._idle: list[_Worker] = []
        self._all: set[_Worker] = set()

    async def _spawn(self) -> _Worker:
        """A started worker with the target loaded (ConfigError when it cannot load)."""
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "ragcourt.answering.external.python_worker",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            env=_child_env(),
        )
        worker = _Worker(proc)
        self._all.add(worker)
        init = {
            "spec": self.spec.model_dump(mode="json"),
            "limits": self.limits.model_dump(mode="json"),
            "where": self.where,
        }
        try:
            reply = await asyncio.wait_for(worker.request(init), self.spec.start_timeout_s)
        except TimeoutError:
            await self._discard(worker)
            raise ConfigError(
                f"{self.where}: loading '{self.spec.callable}' took longer than "
                f"start_timeout_s ({self.spec.start_timeout_s:g}s)"
            ) from None
        except WorkerDied as died:
            self._all.discard(worker)
            raise ConfigError(
                f"{self.where}: system process {_exit_text(died.code)} while loading "
                f"'{self.spec.callable}'"
            ) from None
        except BaseException:
            await self._discard(worker)
            raise
        if "error" in reply:
            await self._discard(worker)
            raise ConfigError(str(reply["error"]))
        return worker

    async def _discard(self, worker: _Worker) -> None:
        self._all.discard(worker)
        await worker.kill()

    async def start(self) -> None:
        """Start the first worker before any question (its load errors are ConfigErrors)."""
        self._idle.append(await self._spawn())

    async def _acquire(self) -> _Worker:
        while self._idle:
            worker = self._idle.pop()
            if worker.alive:
                return worker
            await self._discard(worker)  # ended while idle (a thread of user code exited)
        try:
            return await self._spawn()
        except ConfigError as err:  # a later worker failing to start fails its question
            raise CallFailed(str(err).removeprefix(f"{self.where}: ")) from None

    async def ask(self, qid: str, question: str) -> Reply:
        """The worker's reply to one question; :class:`CallFailed` on any failure."""
        worker = await self._acquire()
        timeout = self.spec.timeout_s
        try:
            reply = await asyncio.wait_for(
                worker.request({"qid": qid, "question": question}), timeout
            )
        except TimeoutError:
            await self._discard(worker)
            raise CallFailed(f"timed out after {timeout:g}s (system process killed)") from None
        except WorkerDied as died:
            self._all.discard(worker)
            raise CallFailed(str(died)) from None
        except BaseException:  # cancelled: the worker may be mid-question, never reuse it
            await self._discard(worker)
            raise
        self._idle.append(worker)
        if "failed" in reply:
            raise CallFailed(str(reply["failed"]), retryable=bool(reply.get("retryable", True)))
        answer = reply.get("reply")
        if not isinstance(answer, Reply):
            raise CallFailed("system process sent no reply")
        return answer

    async def close(self) -> None:
        """End every worker (idle ones asked politely, the rest killed)."""
        workers, self._idle = list(self._all), []
        self._all.clear()
        await asyncio.gather(*(w.close() for w in workers), return_exceptions=True)


# ---- the worker process


def _read_frame(stream: BinaryIO) -> Any:
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    (size,) = _HEADER.unpack(header)
    data = stream.read(size)
    if len(data) < size:
        return None
    return pickle.loads(data)


def _write_frame(stream: BinaryIO, message: dict[str, Any]) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _die_with_parent() -> None:
    """Linux: SIGKILL this worker when the stage's process dies (prctl PR_SET_PDEATHSIG)."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG


def _serve() -> int:
    """The worker's main loop: load the target, then answer frames until stdin closes."""
    _die_with_parent()
    protocol_in = os.fdopen(os.dup(0), "rb")
    protocol_out = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)  # user prints go to stderr, never into the protocol
    os.close(null)

    from ragcourt.answering.external.python_target import answer_one, invoker, load_target

    init = _read_frame(protocol_in)
    if not isinstance(init, dict):
        return 0
    spec = PythonSpec.model_validate(init["spec"])
    limits = LimitsParams.model_validate(init["limits"])
    where = str(init["where"])
    try:
        inv = invoker(load_target(spec, where), where, spec.callable)
    except ConfigError as err:
        _write_frame(protocol_out, {"error": str(err)})
        return 0
    _write_frame(protocol_out, {"ready": True})
    loop = asyncio.new_event_loop()
    while True:
        message = _read_frame(protocol_in)
        if not isinstance(message, dict):
            return 0
        try:
            reply = loop.run_until_complete(
                answer_one(inv, str(message["qid"]), str(message["question"]), limits)
            )
            out: dict[str, Any] = {"reply": reply}
        except CallFailed as err:
            out = {"failed": err.message, "retryable": err.retryable}
        try:
            _write_frame(protocol_out, out)
        except (pickle.PicklingError, TypeError, AttributeError) as err:
            _write_frame(protocol_out, {"failed": f"reply cannot be sent back ({err})"})


if __name__ == "__main__":
    status = _serve()
    sys.stderr.flush()
    os._exit(status)  # never wait for threads the user's code left running
