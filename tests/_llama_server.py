"""A real ``llama_cpp.server`` (OpenAI-compatible) in a subprocess, for slow tests.

``llama_server(gguf, n_ctx=...)`` picks a free port on 127.0.0.1, starts
``python -m llama_cpp.server --model <gguf> --host 127.0.0.1 --port N --n_ctx ...``, waits
(bounded by ``start_timeout_s``) until ``GET /v1/models`` answers 200 and yields a
:class:`LlamaServer`; on exit the process is terminated (killed after ``stop_timeout_s``).
A server that exits early or never answers raises ``RuntimeError`` with the tail of its log.
Use its ``base_url`` as litellm's ``api_base`` with a model string ``openai/<anything>``.

    with llama_server(smollm2_gguf()) as srv:
        litellm.completion(model="openai/x", api_base=srv.base_url, api_key="none", ...)

``smollm2_gguf()`` is the embedded SmolLM2-135M GGUF of ``configs/models.yaml`` (resolved and
sha256-checked through the registry); ``missing_server_extras()`` names the packages
``llama_cpp.server`` needs that are not installed (skip the test when it is not empty).
"""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

SERVER_MODULES = ("uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings")


@dataclass(frozen=True)
class LlamaServer:
    """A running server: ``base_url`` ends in ``/v1``; ``log`` is its stdout+stderr file."""

    base_url: str
    port: int
    pid: int
    log: Path


def missing_server_extras() -> list[str]:
    """Modules ``llama_cpp.server`` imports that are not installed (empty: it can start)."""
    missing = [m for m in ("llama_cpp", *SERVER_MODULES) if importlib.util.find_spec(m) is None]
    return missing


def smollm2_gguf(models_file: str | None = None) -> Path:
    """The embedded SmolLM2-135M GGUF (registry ``smollm2-135m``), sha256-verified."""
    from ragcourt.llm.gguf_files import resolve_gguf
    from ragcourt.llm.local_provider import registry_entry

    name, entry = registry_entry("local/smollm2-135m", models_file)
    return resolve_gguf(name, entry)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as resp:
            return int(resp.status) == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


def _tail(path: Path, n: int = 2000) -> str:
    try:
        return path.read_text(errors="replace")[-n:]
    except OSError:
        return ""


@contextmanager
def llama_server(
    gguf: Path | str,
    *,
    n_ctx: int = 2048,
    n_threads: int | None = None,
    extra_args: Sequence[str] = (),
    start_timeout_s: float = 120.0,
    stop_timeout_s: float = 10.0,
) -> Iterator[LlamaServer]:
    """Serve ``gguf`` with ``llama_cpp.server`` for the block (see the module docstring)."""
    port = free_port()
    cmd = [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(gguf),
        "--host", "127.0.0.1",
        "--port", str(port),
        "--n_ctx", str(n_ctx),
    ]  # fmt: skip
    if n_threads is not None:
        cmd += ["--n_threads", str(n_threads)]
    cmd += list(extra_args)
    with tempfile.TemporaryDirectory(prefix="llama-server-") as tmp:
        log = Path(tmp) / "server.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
        try:
            base = f"http://127.0.0.1:{port}/v1"
            deadline = time.monotonic() + start_timeout_s
            while not _answers(f"{base}/models"):
                if proc.poll() is not None:
                    raise RuntimeError(
                        f"llama_cpp.server exited with {proc.returncode}: {_tail(log)}"
                    )
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"llama_cpp.server did not answer in {start_timeout_s:g}s: {_tail(log)}"
                    )
                time.sleep(0.2)
            yield LlamaServer(base_url=base, port=port, pid=proc.pid, log=log)
        finally:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(stop_timeout_s)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(stop_timeout_s)
