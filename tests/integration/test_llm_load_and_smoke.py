"""The embedded model loads with the extra-buffer setting the CPU rule picks, and a native
crash in the child process of ``ragcourt doctor`` is one line naming the signal and remedy."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from ragcourt.llm import local_provider as lp
from ragcourt.llm.cpu_features import ENV_EXTRA_BUFTS
from ragcourt.llm.gguf_files import resolve_gguf
from ragcourt.llm.smoke import probe


@pytest.mark.parametrize("setting", ["0", "1"])
def test_model_loads_with_the_extra_bufts_setting(
    setting: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import llama_cpp.llama_cpp as lib

    monkeypatch.setenv(ENV_EXTRA_BUFTS, setting)  # "0": what the rule picks on an AMX CPU
    name, entry = lp.registry_entry("local/smollm2-135m", None)
    original = lib.llama_model_default_params
    m = lp.LocalModel(name, entry, resolve_gguf(name, entry), 1, 1)
    assert lib.llama_model_default_params is original  # restored after the load
    assert lib.llama_model_default_params().use_extra_bufts is True  # llama.cpp's default
    assert m.llm.model_params.use_extra_bufts is (setting == "1")
    with m.lock:
        g = m.generate(
            [{"role": "user", "content": "Say OK."}],
            temperature=0.0,
            max_tokens=3,
            seed=0,
            stop=[],
            top_logprobs=0,
            want_logprobs=False,
            top_p=1.0,
            response_format=None,
            deadline=None,
        )
    assert g.completion_tokens >= 1


def test_smoke_probe_ok_and_a_native_crash_is_one_line(tmp_path: Path) -> None:
    ok = probe("smollm2-135m")
    assert ok.ok and "1-token chat call" in ok.detail
    crash = tmp_path / "python-that-segfaults"  # a child that dies by SIGSEGV, as on AMX CPUs
    crash.write_text("#!/bin/sh\nkill -SEGV $$\n")
    crash.chmod(crash.stat().st_mode | stat.S_IEXEC)
    res = probe("smollm2-135m", python=str(crash))
    assert not res.ok and "\n" not in res.detail
    assert "local/smollm2-135m" in res.detail and "SIGSEGV" in res.detail
    assert "CPU flags:" in res.detail and "GGML_NATIVE=OFF" in res.detail
    missing = probe("no-such-model")
    assert not missing.ok and "not in the model registry" in missing.detail
