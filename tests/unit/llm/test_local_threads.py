"""How many threads the local llama.cpp models use: ``$RAGCOURT_LLM_THREADS``, else the
process's core budget ``$OMP_NUM_THREADS`` (a Dask worker's nanny sets it to 1), else a share
of the machine's cores."""

from __future__ import annotations

import os

import pytest

from ragcourt.core.errors import ConfigError
from ragcourt.llm.local_provider import default_batch_threads, default_threads


def test_a_process_budget_of_one_core_gives_one_thread_for_prompts_and_tokens(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("RAGCOURT_LLM_THREADS", raising=False)
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert default_threads() == 1 and default_batch_threads() == 1


def test_the_ragcourt_setting_wins_and_a_bad_one_is_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    monkeypatch.setenv("RAGCOURT_LLM_THREADS", "3")
    assert default_threads() == 3 and default_batch_threads() == 3
    monkeypatch.setenv("RAGCOURT_LLM_THREADS", "many")
    with pytest.raises(ConfigError, match="RAGCOURT_LLM_THREADS='many'"):
        default_threads()


def test_without_a_budget_prompts_use_every_core(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RAGCOURT_LLM_THREADS", raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    cores = os.cpu_count() or 2
    assert default_batch_threads() == max(1, min(8, cores))
    assert default_threads() == max(1, min(8, cores // 2))
