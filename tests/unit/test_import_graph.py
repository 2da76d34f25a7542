"""Package hygiene: every ``ragcourt`` module imports on its own, without side effects on the
environment, the module-level import graph has no cycles, and no package imports from a layer
above its own."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "ragcourt"


def _modules() -> list[str]:
    out = []
    for f in sorted(PACKAGE.rglob("*.py")):
        rel = f.relative_to(ROOT).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out.append(".".join(parts))
    return out


def _module_file(name: str) -> Path | None:
    base = ROOT.joinpath(*name.split("."))
    for cand in (base.with_suffix(".py"), base / "__init__.py"):
        if cand.is_file():
            return cand
    return None


def _imports(name: str) -> set[str]:
    """``ragcourt`` modules the module imports, at module level, deferred inside a function or
    under ``if TYPE_CHECKING`` (a deferred or type-only import that closes a loop is still a
    cycle: it hides a dependency the layering forbids)."""
    f = _module_file(name)
    assert f is not None
    tree = ast.parse(f.read_text(encoding="utf-8"))
    found: set[str] = set()

    def visit(nodes: list[ast.stmt]) -> None:
        for node in nodes:
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names if a.name.startswith("ragcourt"))
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                mod = node.module or ""
                if mod.startswith("ragcourt"):
                    for a in node.names:  # `from pkg import submodule` imports the submodule
                        sub = f"{mod}.{a.name}"
                        found.add(sub if _module_file(sub) else mod)
            elif isinstance(node, ast.If):
                visit(node.body)
                visit(node.orelse)
            elif isinstance(
                node,
                ast.Try
                | ast.FunctionDef
                | ast.AsyncFunctionDef
                | ast.ClassDef
                | ast.With
                | ast.For
                | ast.While,
            ):
                visit(node.body)

    visit(tree.body)
    return found


def _import_graph() -> nx.DiGraph:
    """Module -> module it imports (each a node of :func:`_modules`)."""
    g = nx.DiGraph()
    for m in _modules():
        g.add_node(m)
        for dep in _imports(m):
            # importing a.b.c runs a/__init__ and a/b/__init__ too; a module's own parent
            # packages are already initialised before it runs, so they are no edge
            parts = dep.split(".")
            for i in range(1, len(parts) + 1):
                target = ".".join(parts[:i])
                if target == m or m.startswith(target + "."):
                    continue
                if _module_file(target) is not None:
                    g.add_edge(m, target)
    return g


def test_no_import_cycles_among_ragcourt_modules() -> None:
    cycles = [c for c in nx.simple_cycles(_import_graph()) if len(c) > 1]
    assert cycles == [], f"import cycles: {cycles[:5]}"


# Bottom to top; packages on one level may import each other without forming a cycle. Modules
# directly in ``ragcourt`` (``ragcourt/__init__.py``, ``stages.py``) are the top level.
LAYERS = (
    ("core",),
    ("llm",),
    ("corpus",),
    ("retrieval",),
    ("qagen", "answering", "judging"),
    ("tournament", "calibration"),
    ("reporting",),
    ("orchestration",),
    ("cli",),
)
TOP = len(LAYERS)


def _package(module: str) -> str:
    """The package right under ``ragcourt`` that holds ``module`` (``""``: top level)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and (PACKAGE / parts[1]).is_dir() else ""


def _layer(package: str) -> int:
    """The level of ``package`` in :data:`LAYERS` (``TOP`` for the top level); a package
    missing from :data:`LAYERS` fails the test (give it its place)."""
    if package == "":
        return TOP
    for level, packages in enumerate(LAYERS):
        if package in packages:
            return level
    raise AssertionError(f"package ragcourt.{package} has no layer in LAYERS")


def test_no_import_reaches_a_higher_layer() -> None:
    """Every import (type-only and deferred included) goes to the same layer or below, and
    the imports between packages of one layer form no cycle."""
    upward = []
    sideways = nx.DiGraph()
    for src, dst in _import_graph().edges:
        a, b = _package(src), _package(dst)
        if a == b:
            continue
        if _layer(b) > _layer(a):
            upward.append(f"{src} -> {dst}")
        elif _layer(b) == _layer(a):
            sideways.add_edge(a, b)
    assert upward == [], f"{len(upward)} upward imports: {sorted(upward)[:10]}"
    assert list(nx.simple_cycles(sideways)) == [], "packages of one layer import each other"


@pytest.mark.parametrize("chunk", range(4))
def test_every_module_imports_in_isolation_without_touching_the_environment(chunk: int) -> None:
    """Each module imports, and no ragcourt code writes os.environ while importing it (third
    party libraries may: torch sets allocator variables)."""
    mods = [m for i, m in enumerate(_modules()) if i % 4 == chunk]
    code = (
        "import importlib, os, sys\n"
        "ROOT = sys.argv[1]\n"
        "writes = []\n"
        "orig = os._Environ.__setitem__\n"
        "def tracked(self, key, value):\n"
        "    f = sys._getframe(1)\n"
        "    while f and f.f_code.co_filename.endswith(('/os.py', '_collections_abc.py')):\n"
        "        f = f.f_back\n"
        "    if f and f.f_code.co_filename.startswith(ROOT):\n"
        "        writes.append(key)\n"
        "    orig(self, key, value)\n"
        "os._Environ.__setitem__ = tracked\n"
        "bad = []\n"
        "for m in sys.argv[2:]:\n"
        "    try:\n"
        "        importlib.import_module(m)\n"
        "    except Exception as e:\n"
        "        bad.append(f'{m}: {type(e).__name__}: {e}')\n"
        "        continue\n"
        "    if writes:\n"
        "        bad.append(f'{m}: set environment variables {sorted(set(writes))}')\n"
        "        writes.clear()\n"
        "print('\\n'.join(bad))\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in {"HF_HUB_OFFLINE"}}
    # one interpreter per module would take minutes; modules are imported in order, each
    # checked for its own environment changes (an earlier import cannot hide a later one's)
    proc = subprocess.run(
        [sys.executable, "-c", code, str(PACKAGE) + "/", *mods],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == ""
