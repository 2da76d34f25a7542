"""glibc's mmap threshold is fixed by :func:`bound_heap`: a large block freed no longer raises
it, so the next large block is mapped (and returned on free) rather than kept on the heap.
Each check runs in a fresh interpreter: malloc's state is per process."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from ragcourt.core.allocator import _glibc

pytestmark = pytest.mark.skipif(_glibc() is None, reason="glibc's malloc only")

PROBE = """
import ctypes, json, sys
from ragcourt.core.allocator import bound_heap

class Mallinfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in (
        "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost".split())]

libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
libc.mallinfo2.restype = Mallinfo2
applied = bound_heap() if sys.argv[1] == "tuned" else {}
libc.free(libc.malloc(4 << 20))  # glibc's default: the threshold rises to 4 MiB
before = libc.mallinfo2().hblks
block = libc.malloc(1 << 20)
mapped = libc.mallinfo2().hblks - before
libc.free(block)
print(json.dumps({"applied": applied, "mapped": mapped}))
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


def test_a_freed_large_block_no_longer_moves_the_threshold() -> None:
    assert probe("default") == {"applied": {}, "mapped": 0}
    assert probe("tuned") == {
        "applied": {"MALLOC_MMAP_THRESHOLD_": 131072, "MALLOC_ARENA_MAX": 2},
        "mapped": 1,
    }


def test_a_setting_in_the_environment_is_left_to_the_user() -> None:
    got = probe("tuned", MALLOC_MMAP_THRESHOLD_="8388608")
    assert got == {"applied": {"MALLOC_ARENA_MAX": 2}, "mapped": 0}
