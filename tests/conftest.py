"""Shared fixtures and layout rules for the test suite.

- ``tests/unit``: pure functions and single modules, scripted models where a test needs exact
  control (the file name says ``scripted_model``); ``tests/integration``: stages, CLI, flows,
  DVC in a temp git repo, a real local HTTP server, the real tiny models;
  ``tests/slow``: real-model and full-DVC runs that take minutes, marked ``slow`` here
  (``pytest -m slow``); the default run deselects them.
- Helpers shared by several files live beside this file (``_tiny_project``, ``_report_data``,
  ``_tournament_data``); ``pyproject.toml`` puts ``tests/`` on ``sys.path`` for them.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

from ragcourt.core.offline import apply as apply_offline

REPO_ROOT = Path(__file__).resolve().parents[1]

# CI runs a fixed example sequence (a red CI must reproduce); locally hypothesis explores.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

apply_offline()  # the tests are an entry point too: no hub, telemetry or cost-map lookups


def pytest_configure(config: pytest.Config) -> None:
    """Child processes run ``python -m stages <name>`` from temp folders: put the
    project root on their PYTHONPATH, as running from the root would; stages get guarded
    params views (:mod:`ragcourt.orchestration.declared_params`)."""
    parts = [str(REPO_ROOT), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    os.environ["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(parts))
    # every stage sees only the params it declares: an undeclared read fails the test
    os.environ["RAGCOURT_STRICT_PARAMS"] = "1"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every test under tests/slow is ``slow``."""
    slow_dir = Path(__file__).resolve().parent / "slow"
    for item in items:
        if slow_dir in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The project root (params.yaml, configs/, dvc.yaml)."""
    return REPO_ROOT
