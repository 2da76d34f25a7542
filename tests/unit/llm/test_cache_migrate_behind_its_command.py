"""The one-off reply-cache migration is reached only through ``ragcourt cache migrate``: no
other module of the package imports it, and the scripted test models are not in the package."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[3] / "ragcourt"


def _importers(module: str) -> set[str]:
    out = set()
    for f in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            if module in names:
                out.add(str(f.relative_to(PACKAGE.parent)))
    return out


def test_only_the_cache_command_imports_the_migration() -> None:
    assert _importers("ragcourt.llm.cache_migrate") == {"ragcourt/cli/cache_cmd.py"}


def test_scripted_models_live_in_tests_not_in_the_package() -> None:
    assert not (PACKAGE / "llm" / "testing.py").exists()
    assert _importers("ragcourt.llm.testing") == set()
    assert (Path(__file__).resolve().parents[2] / "_llm_testing.py").is_file()
