"""Load one local model and run one tiny chat call, in a child process.

``python -m ragcourt.llm.smoke <name> [--models-file F]`` prints ``ok <tokens>`` and exits 0,
or prints one line and exits 2 for a Python-level error. A native crash (SIGSEGV, SIGILL)
kills only the child: :func:`probe` turns it into a :class:`SmokeResult` whose ``detail`` is
one line naming the model, the signal, the CPU flags that matter and the remedy.
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
from dataclasses import dataclass

from ragcourt.llm.cpu_features import ENV_EXTRA_BUFTS, has_amx, relevant_flags

#: the reinstall line of the portable llama.cpp build (no native flags, no AMX)
PORTABLE_BUILD = (
    'CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF '
    '-DGGML_AMX_INT8=OFF" pip install --no-cache-dir --force-reinstall --no-deps '
    "llama-cpp-python==0.3.36"
)


@dataclass(frozen=True)
class SmokeResult:
    ok: bool
    detail: str


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(code).name
    except ValueError:
        return f"signal {code}"


def remedy(flags: frozenset[str] | None = None) -> str:
    """What to do after a native crash on this CPU (one sentence)."""
    if has_amx(flags):
        return (
            f"this CPU has AMX: set {ENV_EXTRA_BUFTS}=0 (load without repacked weights), or "
            f"reinstall the portable build: {PORTABLE_BUILD}"
        )
    return f"reinstall the portable llama.cpp build: {PORTABLE_BUILD}"


def probe(
    name: str, models_file: str | None = None, timeout_s: float = 300.0, python: str | None = None
) -> SmokeResult:
    """Run the smoke call for ``local/<name>`` in a child process (see module doc)."""
    cmd = [python or sys.executable, "-m", "ragcourt.llm.smoke", name]
    if models_file:
        cmd += ["--models-file", models_file]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        return SmokeResult(False, f"local/{name}: no reply to a 1-token chat call in {timeout_s}s")
    out = (proc.stdout.strip().splitlines() or [""])[-1]
    if proc.returncode == 0:
        return SmokeResult(True, f"1-token chat call {out}")
    if proc.returncode < 0:
        sig = _signal_name(-proc.returncode)
        return SmokeResult(
            False,
            f"local/{name}: the model process died with {sig} on a 1-token chat call "
            f"(CPU flags: {relevant_flags()}); {remedy()}",
        )
    err = (proc.stderr.strip().splitlines() or [f"exit code {proc.returncode}"])[-1]
    return SmokeResult(False, f"local/{name}: {err}")


def main(argv: list[str] | None = None) -> int:
    from ragcourt.core import offline

    offline.apply()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("name", help="registry name of the local model (configs/models.yaml)")
    ap.add_argument("--models-file", default=None)
    args = ap.parse_args(argv)
    from ragcourt.llm.local_provider import complete

    try:
        _, g = complete(
            f"local/{args.name}",
            [{"role": "user", "content": "Say OK."}],
            {"max_tokens": 1, "temperature": 0.0, "ragcourt_models_file": args.models_file},
            None,
        )
    except Exception as exc:  # a Python-level failure: one line for the parent
        print(f"{type(exc).__name__}: {exc}".splitlines()[0], file=sys.stderr)
        return 2
    print(f"ok {g.completion_tokens} token")
    return 0


if __name__ == "__main__":
    sys.exit(main())
