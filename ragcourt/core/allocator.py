"""glibc malloc settings that keep a long stage's resident memory from growing with its input.

A stage that embeds batch after batch frees tensors and buffers of varying sizes. With glibc's
defaults, blocks above the mmap threshold are returned on free, but the threshold rises to the
largest block freed so far (up to 32 MiB), after which such blocks come from the heap and stay
resident; each thread may also get its own arena of kept memory. :func:`bound_heap` fixes the
threshold at :data:`MMAP_THRESHOLD` bytes (blocks of 128 KiB and more are mapped and returned
to the system on free) and caps the arenas at :data:`ARENA_MAX`, through ``mallopt`` at run
time: the same as starting the process with ``MALLOC_MMAP_THRESHOLD_=131072
MALLOC_ARENA_MAX=2``. Measured on the x10 speech corpus: embed peak 1,516 -> 1,088 MB
(docs/results/scale.md).

A setting already given in the environment is the user's and is left alone (glibc read it when
the process started). Elsewhere than glibc (macOS, musl) nothing is changed. Called by every
entry point (:func:`ragcourt.core.entry.run_entry`, the CLI, the Prefect stage task); importing
this module changes nothing.
"""

from __future__ import annotations

import ctypes
import os
import sys

#: mallopt parameters (glibc's malloc.h)
M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8

#: blocks of this many bytes or more are mmapped and returned to the system on free
MMAP_THRESHOLD = 128 * 1024
#: at most this many malloc arenas (glibc's default: 8 per core)
ARENA_MAX = 2

#: environment variable -> (mallopt parameter, value)
SETTINGS = {
    "MALLOC_MMAP_THRESHOLD_": (M_MMAP_THRESHOLD, MMAP_THRESHOLD),
    "MALLOC_ARENA_MAX": (M_ARENA_MAX, ARENA_MAX),
}


def _glibc() -> ctypes.CDLL | None:
    """This process's C library when it is glibc (it has ``gnu_get_libc_version``), else None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None)
    except OSError:
        return None
    if not hasattr(libc, "gnu_get_libc_version") or not hasattr(libc, "mallopt"):
        return None
    return libc


def bound_heap() -> dict[str, int]:
    """Apply :data:`SETTINGS` through ``mallopt`` except those set in the environment; return
    the ones applied, by environment name (empty off glibc). Idempotent."""
    libc = _glibc()
    if libc is None:
        return {}
    mallopt = libc.mallopt
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    applied: dict[str, int] = {}
    for env, (param, value) in SETTINGS.items():
        if env in os.environ:
            continue
        if mallopt(param, value) == 1:  # mallopt returns 1 on success
            applied[env] = value
    return applied
