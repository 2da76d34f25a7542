"""The AMX rule for llama.cpp's extra buffer types, and the override that applies it."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragcourt.llm.cpu_features import (
    ENV_EXTRA_BUFTS,
    cpu_flags,
    has_amx,
    llama_built_with_amx,
    relevant_flags,
    use_extra_bufts,
)

AMX = frozenset({"avx2", "avx512f", "amx_tile", "amx_int8"})
NO_AMX = frozenset({"avx2", "avx512f"})
INFO_AMX = "CPU : SSE3 = 1 | AVX2 = 1 | AVX512 = 1 | AMX_INT8 = 1 | REPACK = 1 |"
INFO_PLAIN = "CPU : SSE3 = 1 | AVX2 = 1 | AVX512 = 1 | REPACK = 1 |"


@pytest.mark.parametrize(
    ("flags", "info", "env", "expected"),
    [
        (AMX, INFO_AMX, {}, False),  # the crashing combination: repacking off
        (AMX, INFO_PLAIN, {}, True),  # a portable build has no AMX path to crash in
        (NO_AMX, INFO_AMX, {}, True),  # AMX kernels compiled but never chosen on this CPU
        (NO_AMX, INFO_PLAIN, {}, True),
        (NO_AMX, INFO_PLAIN, {ENV_EXTRA_BUFTS: "0"}, False),  # the override wins either way
        (AMX, INFO_AMX, {ENV_EXTRA_BUFTS: "1"}, True),
        (AMX, INFO_AMX, {ENV_EXTRA_BUFTS: "yes"}, False),  # not 0/1: the rule applies
    ],
)
def test_extra_bufts_rule(
    flags: frozenset[str], info: str, env: dict[str, str], expected: bool
) -> None:
    assert use_extra_bufts(flags, info, env) is expected


def test_flags_read_from_cpuinfo(tmp_path: Path) -> None:
    f = tmp_path / "cpuinfo"
    f.write_text("processor\t: 0\nflags\t\t: fpu avx2 amx_tile amx_int8 avx512f\n\n")
    flags = cpu_flags(f)
    assert has_amx(flags) and not has_amx(NO_AMX)
    assert relevant_flags(flags) == "avx2 avx512f amx_tile amx_int8"
    assert cpu_flags(tmp_path / "absent") == frozenset()
    assert llama_built_with_amx(INFO_AMX) and not llama_built_with_amx(INFO_PLAIN)
