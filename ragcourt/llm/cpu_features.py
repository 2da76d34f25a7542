"""CPU facts the embedded llama.cpp build depends on, and the load setting they decide.

llama-cpp-python built with native CPU flags compiles ggml's AMX kernels on a CPU whose
compiler target has AMX (Intel Xeon Sapphire Rapids and later: ``amx_tile amx_int8`` in
``/proc/cpuinfo``). Its AMX weight-repacking buffer type (one of the model's "extra buffer
types") crashes with SIGSEGV on the first call (llama-cpp-python 0.3.36). Loading the model
with ``use_extra_bufts = False`` keeps the weights in plain CPU buffers and avoids that path.

Rule (:func:`use_extra_bufts`): extra buffer types stay on (today's speed, the repacked
AVX2/AVX-512 kernels) unless the CPU has AMX **and** the loaded llama.cpp library was built
with AMX; ``$RAGCOURT_LLAMA_EXTRA_BUFTS`` = ``0`` / ``1`` overrides the rule either way.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

ENV_EXTRA_BUFTS = "RAGCOURT_LLAMA_EXTRA_BUFTS"
#: the flags (``/proc/cpuinfo`` names) that decide which ggml CPU kernels can run
RELEVANT_FLAGS = ("avx2", "avx512f", "avx512_vnni", "avx512_bf16", "amx_tile", "amx_int8")


@cache
def cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> frozenset[str]:
    """The first processor's ``flags`` line of ``/proc/cpuinfo`` (empty off Linux)."""
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return frozenset()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "flags":
            return frozenset(value.split())
    return frozenset()


def relevant_flags(flags: frozenset[str] | None = None) -> str:
    """The kernel-deciding flags this CPU has, e.g. ``avx2 avx512f amx_tile`` (or ``none``)."""
    have = cpu_flags() if flags is None else flags
    return " ".join(f for f in RELEVANT_FLAGS if f in have) or "none"


def has_amx(flags: frozenset[str] | None = None) -> bool:
    have = cpu_flags() if flags is None else flags
    return "amx_tile" in have or "amx_int8" in have


@cache
def llama_system_info() -> str:
    """llama.cpp's ``llama_print_system_info()``: what the loaded library was compiled with."""
    import llama_cpp

    return bytes(llama_cpp.llama_print_system_info()).decode("utf-8", errors="replace")


def llama_built_with_amx(info: str | None = None) -> bool:
    """True when the library's system info reports AMX kernels (``AMX_INT8 = 1``)."""
    text = llama_system_info() if info is None else info
    return "AMX_INT8 = 1" in text or "AMX = 1" in text


def use_extra_bufts(
    flags: frozenset[str] | None = None,
    info: str | None = None,
    env: dict[str, str] | None = None,
) -> bool:
    """Whether to load GGUF models with llama.cpp's extra (repacked) buffer types: see the
    module doc. ``flags``/``info``/``env`` default to this machine's."""
    value = (os.environ if env is None else env).get(ENV_EXTRA_BUFTS, "").strip()
    if value in ("0", "1"):
        return value == "1"
    return not (has_amx(flags) and llama_built_with_amx(info))
