"""glibc malloc settings that keep a long stage's resident memory from growing with its input.

A stage that embeds batch after batch frees tensors and buffers of varying sizes. glibc keeps
freed memory for reuse: blocks above the mmap threshold are returned on free, but the threshold
rises to the largest block freed so far (up to 32 MiB), after which such blocks come from the
heap, and the freed holes between live blocks stay resident; each thread may also get an arena
of its own. Two remedies, both through glibc's own calls:

* :func:`bound_heap` caps the arenas at :data:`ARENA_MAX` (``mallopt(M_ARENA_MAX)``, the same
  as starting the process with ``MALLOC_ARENA_MAX=2``), at every entry point
  (:func:`ragcourt.core.entry.run_entry`, the CLI, the Prefect stage task);
* :func:`release_free_memory` hands the free pages of every arena back to the system
  (``malloc_trim(0)``), called by a streaming loop after each batch.

Fixing the mmap threshold at 128 KiB bounds memory too (x10 embed 1,516 -> 1,088 MB) but makes
every large tensor a fresh mapping: MiniLM encodes 25-35% slower (docs/results/scale.md), so it
is not done. A setting already given in the environment is the user's and is left alone (glibc
read it when the process started). Elsewhere than glibc (macOS, musl) nothing is changed.
Importing this module changes nothing.
"""

from __future__ import annotations

import ctypes
import os
import sys
from functools import cache

#: mallopt parameter (glibc's malloc.h)
M_ARENA_MAX = -8

#: at most this many malloc arenas (glibc's default: 8 per core)
ARENA_MAX = 2

#: environment variable -> (mallopt parameter, value)
SETTINGS = {"MALLOC_ARENA_MAX": (M_ARENA_MAX, ARENA_MAX)}


@cache
def _glibc() -> ctypes.CDLL | None:
    """This process's C library when it is glibc (it has ``gnu_get_libc_version``), else None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None)
    except OSError:
        return None
    needed = ("gnu_get_libc_version", "mallopt", "malloc_trim")
    if not all(hasattr(libc, name) for name in needed):
        return None
    libc.mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    libc.mallopt.restype = ctypes.c_int
    libc.malloc_trim.argtypes = [ctypes.c_size_t]
    libc.malloc_trim.restype = ctypes.c_int
    return libc


def bound_heap() -> dict[str, int]:
    """Apply :data:`SETTINGS` through ``mallopt`` except those set in the environment; return
    the ones applied, by environment name (empty off glibc). Idempotent."""
    libc = _glibc()
    if libc is None:
        return {}
    applied: dict[str, int] = {}
    for env, (param, value) in SETTINGS.items():
        if env in os.environ:
            continue
        if libc.mallopt(param, value) == 1:  # mallopt returns 1 on success
            applied[env] = value
    return applied


def release_free_memory() -> bool:
    """``malloc_trim(0)``: return the free pages of every arena to the system (True when some
    were; False off glibc). Costs a walk over the free lists, so call it once per batch."""
    libc = _glibc()
    return libc is not None and libc.malloc_trim(0) == 1
