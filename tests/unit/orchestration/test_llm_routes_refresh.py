"""The cheap check outside DVC: ``refresh`` rewrites ``llm_routes``'s output only when the
environment moved a hosted model's route, so DVC re-runs exactly then (no always_changed)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ragcourt.core import catalog
from ragcourt.llm.params import LLMParams
from ragcourt.orchestration.llm_routes import refresh, run
from ragcourt.orchestration.params import Params

ROOT = Path(__file__).resolve().parents[3]


def test_refresh_rewrites_the_routes_file_only_when_the_environment_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(ROOT / "configs", tmp_path / "configs")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("OPENAI_API_BASE", "http://127.0.0.1:9/v1")
    llm = LLMParams(model="openai/some-model", cache_dir="cache", metrics_dir="m")
    params = Params(llm=llm)
    path = catalog.path("llm_routes")
    assert refresh(params) is False and not path.exists()  # the stage writes it first
    run(params)
    before = path.read_bytes()
    assert refresh(params) is False and path.read_bytes() == before
    monkeypatch.setenv("OPENAI_API_BASE", "http://127.0.0.1:10/v1")
    assert refresh(params) is True
    record = json.loads(path.read_text(encoding="utf-8"))
    assert record["stages"]["judge"]["openai/some-model"]["api_base"] == "http://127.0.0.1:10/v1"
    assert refresh(params) is False
