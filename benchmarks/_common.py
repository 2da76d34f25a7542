"""Helpers shared by the benchmarks: the repository's folders, a temp copy of the project's
configuration, running in a directory, and the tests' local OpenAI-compatible server."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]  # the repository: params.yaml, configs/, data/
DATA = ROOT / "benchmarks" / "data"  # committed results
SHARED = ROOT.parent / "shared"  # corpora and validation sets beside the checkout
VALIDATION = SHARED / "validation"  # squadv2_train.json, sts_train.json


def project_copy(prefix: str) -> tuple[Path, dict[str, Any]]:
    """A fresh temp directory (``prefix`` + random) holding a copy of ``configs/``, and the
    repository's ``params.yaml`` as a plain mapping to edit and then :func:`write_params`."""
    work = Path(tempfile.mkdtemp(prefix=prefix))
    shutil.copytree(ROOT / "configs", work / "configs")
    params: dict[str, Any] = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    return work, params


def write_params(work: Path, params: dict[str, Any]) -> None:
    """``params`` as ``work/params.yaml``."""
    (work / "params.yaml").write_text(yaml.safe_dump(params), encoding="utf-8")


@contextmanager
def working_dir(path: Path) -> Iterator[None]:
    """Run the block with ``path`` as the current directory, then return to the previous one."""
    cwd = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(cwd)


def llm_testing() -> ModuleType:
    """``tests/_llm_testing.py`` (``openai_test_server``: a local OpenAI-compatible server),
    imported from its file: ``tests/`` is not a package (another installed distribution may
    own the name ``tests``)."""
    if "_llm_testing" not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            "_llm_testing", ROOT / "tests/_llm_testing.py"
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["_llm_testing"] = module  # its dataclasses resolve their module by name
        spec.loader.exec_module(module)
    return sys.modules["_llm_testing"]


def timed_step(label: str, name: str, wall: dict[str, float], step: Any) -> Any:
    """Run ``step()``, record its wall seconds as ``wall[name]`` and print ``[label] name: s``
    to stderr; return what ``step`` returned."""
    t0 = time.perf_counter()
    out = step()
    wall[name] = round(time.perf_counter() - t0, 1)
    print(f"[{label}] {name}: {wall[name]} s", file=sys.stderr, flush=True)
    return out
