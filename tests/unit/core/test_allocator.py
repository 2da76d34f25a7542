"""glibc's malloc, as the stages set it: at most two arenas (:func:`bound_heap`), and the free
pages of a batch handed back (:func:`release_free_memory`). Each check runs in a fresh
interpreter: malloc's state is per process."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from ragcourt.core.allocator import _glibc

pytestmark = pytest.mark.skipif(_glibc() is None, reason="glibc's malloc only")

PROBE = """
import ctypes, json, os, sys
from ragcourt.core.allocator import bound_heap, release_free_memory

libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
libc.memset.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]

def resident_mb():
    return int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE") >> 20

applied = bound_heap()
size = 64 << 10  # under the mmap threshold: heap blocks
blocks = [libc.malloc(size) for _ in range(2048)]  # 128 MiB
for b in blocks:
    libc.memset(b, 1, size)
for b in blocks[:-1]:  # the last stays: the heap's top cannot simply shrink
    libc.free(b)
held = resident_mb()
released = release_free_memory() if sys.argv[1] == "trim" else False
print(json.dumps({"applied": applied, "released": released, "freed_mb": held - resident_mb()}))
"""


def probe(mode: str, **env: str) -> dict[str, object]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    out = subprocess.run(
        [sys.executable, "-c", PROBE, mode],
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, object] = json.loads(out.stdout)
    return result


def test_a_batchs_free_pages_go_back_to_the_system() -> None:
    kept = probe("keep")
    trimmed = probe("trim")
    assert kept["released"] is False and kept["freed_mb"] == 0  # glibc keeps the holes
    assert trimmed["released"] is True
    assert isinstance(trimmed["freed_mb"], int) and trimmed["freed_mb"] >= 100  # of 128 MiB


def test_arenas_are_capped_unless_the_environment_says_otherwise() -> None:
    assert probe("keep")["applied"] == {"MALLOC_ARENA_MAX": 2}
    assert probe("keep", MALLOC_ARENA_MAX="4")["applied"] == {}
