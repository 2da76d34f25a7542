"""Loading a plug-in module for one test: its source written to a temp file and imported as
an entry-point plug-in would be, with its registry's kinds copied first so the plug-in's
kinds are gone after the test."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from ragcourt.core.registry import Registry


def load_plugin(
    source: str, name: str, registry: Registry[Any], tmp_path: Path, mp: pytest.MonkeyPatch
) -> ModuleType:
    """Import ``source`` as module ``name`` after copying ``registry``'s kinds (restored by
    ``mp`` at the end of the test)."""
    registry.load()
    mp.setattr(registry, "_factories", dict(registry._factories))
    mp.setattr(registry, "_configs", dict(registry._configs))
    mp.setattr(registry, "_defaults", dict(registry._defaults))
    path = tmp_path / f"{name}.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    mp.setitem(sys.modules, name, module)
    spec.loader.exec_module(module)
    return module
