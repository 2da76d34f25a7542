"""A stage's code deps are the ragcourt files its function really imports: module by module,
transitively, lazy imports and a registry's built-in modules included, nothing else."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragcourt.core.errors import ConfigError
from ragcourt.orchestration.code_deps import (
    PACKAGE_ROOT_FILE,
    _ragcourt_imports,
    code_dirs,
    code_paths,
    module_closure,
)
from ragcourt.orchestration.stage_graph import stage_graph

ROOT = Path(__file__).resolve().parents[3]


def _shuffled_control_modules() -> list[str]:
    found = sorted(p.relative_to(ROOT).as_posix() for p in ROOT.glob("ragcourt/answering/**/*.py"))
    shuffled = [f for f in found if f.endswith("shuffled.py")]
    assert shuffled, "no module of the shuffled control under ragcourt/answering"
    return shuffled


def test_editing_the_shuffled_control_is_no_code_change_of_judge() -> None:
    shuffled = _shuffled_control_modules()
    assert set(shuffled) <= set(code_paths("answer"))  # the stage that runs it does see it
    for stage in ("judge", "judge_retrieval", "judge_summary", "tournament"):
        deps = code_paths(stage)
        assert not set(shuffled) & set(deps), stage
        assert not any(f.startswith("ragcourt/answering/") for f in deps), stage


def test_deps_are_files_with_their_parent_packages() -> None:
    for name in stage_graph():
        deps = code_paths(name)
        assert all((ROOT / f).is_file() for f in deps), name
        for f in (d for d in deps if d.endswith(".py")):  # ragcourt.a.b runs a/__init__.py
            parent = Path(f).parent
            while parent != Path("."):
                assert f"{parent.as_posix()}/__init__.py" in deps, (name, f)
                parent = parent.parent
    assert "ragcourt/reporting/templates/report.html.j2" in code_paths("report")


def test_lazy_imports_and_registry_builtins_count(tmp_path: Path) -> None:
    pkg = tmp_path / "ragcourt"
    (pkg / "kinds").mkdir(parents=True)
    for f in ("__init__.py", "a.py", "unused.py", "kinds/__init__.py", "kinds/one.py"):
        (pkg / f).write_text("")
    (pkg / "kinds/_private.py").write_text("")
    (pkg / "lazy.py").write_text("")
    (pkg / "a.py").write_text(
        "from . import b\n"
        "def f():\n    import ragcourt.lazy\n"
        "REG = Registry('kind', builtins=('ragcourt.kinds',))\n"
    )
    (pkg / "b.py").write_text("X = 1\n")
    closure = module_closure(["ragcourt.a"], tmp_path)
    assert closure == [
        "ragcourt/__init__.py",
        "ragcourt/a.py",
        "ragcourt/b.py",  # relative import
        "ragcourt/kinds/__init__.py",
        "ragcourt/kinds/one.py",  # a registry imports every public module of the package
        "ragcourt/lazy.py",  # imported inside a function
    ]
    assert "ragcourt.kinds.*" in _ragcourt_imports(pkg / "a.py", "ragcourt.a")


def test_unknown_stage_is_a_one_line_error() -> None:
    with pytest.raises(ConfigError, match=r"no stage 'nope' \(stages: ingest, "):
        code_paths("nope")


def test_the_package_root_holds_only_core_imports_so_core_covers_it() -> None:
    """dvc.yaml leaves ragcourt/__init__.py out of the code deps: it may only import from
    ragcourt.core (a dep of every stage) and call what it imports, nothing else."""
    import ast

    tree = ast.parse((ROOT / PACKAGE_ROOT_FILE).read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue  # the docstring
        if isinstance(node, ast.ImportFrom):
            assert (node.module or "").startswith("ragcourt.core."), ast.unparse(node)
            continue
        assert isinstance(node, ast.Expr) and isinstance(node.value, ast.Call), ast.unparse(node)
        assert not node.value.args and not node.value.keywords, ast.unparse(node)
    for stage in stage_graph():
        assert "ragcourt/core" in code_dirs(stage), stage


def test_a_stages_params_and_tables_are_its_own_packages_not_every_stages() -> None:
    """The qagen section and the ``qa`` schema live in ``ragcourt/qagen``: qagen's code deps
    hold them (the tables module too, though it is found by name, not imported), ingest's and
    chunk's hold nothing of qagen, so editing them re-runs qagen and not the corpus stages."""
    qagen = code_paths("qagen")
    assert {"ragcourt/qagen/params.py", "ragcourt/qagen/tables.py"} <= set(qagen)
    for stage in ("ingest", "chunk"):
        assert not any(f.startswith("ragcourt/qagen/") for f in code_paths(stage)), stage
        assert "ragcourt/corpus/tables.py" in code_paths(stage), stage
