"""A stage's code deps are the ragcourt files its function really imports: module by module,
transitively, lazy imports and a registry's built-in modules included, nothing else."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from ragcourt.core.catalog import CODE_DIGESTS
from ragcourt.core.errors import ConfigError
from ragcourt.orchestration.code_deps import (
    DIGEST_CHARS,
    _ragcourt_imports,
    code_digests,
    code_paths,
    module_closure,
    refresh_code_digests,
    write_code_digests,
)
from ragcourt.orchestration.stage_graph import stage_graph

ROOT = Path(__file__).resolve().parents[3]
_SKIP = shutil.ignore_patterns("__pycache__")


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


def test_a_digest_changes_with_the_code_its_stage_imports_and_nothing_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a copy of the package: an edit to the judge's own module changes judge's digest,
    not ingest's; an edit to the shuffled control changes answer's, not judge's; the
    stage's declaration counts too."""
    shutil.copytree(ROOT / "ragcourt", tmp_path / "ragcourt", ignore=_SKIP)
    shutil.copytree(ROOT / "stages", tmp_path / "stages", ignore=_SKIP)
    monkeypatch.chdir(tmp_path)
    before = code_digests(tmp_path)
    _append(tmp_path / "ragcourt/judging/dafe.py")
    after = code_digests(tmp_path)
    assert after["judge"] != before["judge"] and after["ingest"] == before["ingest"]
    for f in _shuffled_control_modules():
        _append(tmp_path / f)
    again = code_digests(tmp_path)
    assert again["answer"] != after["answer"] and again["judge"] == after["judge"]
    _append(tmp_path / "stages/ingest/__init__.py")
    assert code_digests(tmp_path)["ingest"] != again["ingest"]


def test_written_digests_are_rewritten_only_when_they_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(ROOT / "stages", tmp_path / "stages", ignore=_SKIP)
    monkeypatch.chdir(tmp_path)
    assert write_code_digests() is True
    written = yaml.safe_load((tmp_path / CODE_DIGESTS).read_text())
    assert written == {name: d[:DIGEST_CHARS] for name, d in code_digests().items()}
    assert write_code_digests() is False
    _append(tmp_path / "stages/chunk/__init__.py")
    assert write_code_digests() is True
    assert yaml.safe_load((tmp_path / CODE_DIGESTS).read_text())["chunk"] != written["chunk"]


def _append(path: Path) -> None:
    path.write_text(path.read_text() + "\n# an edit\n")


def test_a_stages_params_and_tables_are_its_own_packages_not_every_stages() -> None:
    """The qagen section and the ``qa`` schema live in ``ragcourt/qagen``: qagen's code deps
    hold them (the tables module too, though it is found by name, not imported), ingest's and
    chunk's hold nothing of qagen, so editing them re-runs qagen and not the corpus stages."""
    qagen = code_paths("qagen")
    assert {"ragcourt/qagen/params.py", "ragcourt/qagen/tables.py"} <= set(qagen)
    for stage in ("ingest", "chunk"):
        assert not any(f.startswith("ragcourt/qagen/") for f in code_paths(stage)), stage
        assert "ragcourt/corpus/tables.py" in code_paths(stage), stage


def test_run_refreshes_the_digests_only_where_the_library_is_outside_the_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``ragcourt init`` projects use the installed library, which DVC's code step cannot see:
    ``ragcourt run`` writes the digests there; a checkout leaves them to the code step."""
    shutil.copytree(ROOT / "stages", tmp_path / "stages", ignore=_SKIP)
    monkeypatch.chdir(tmp_path)
    assert refresh_code_digests(tmp_path) is True
    assert refresh_code_digests(tmp_path) is False  # unchanged: not rewritten
    (tmp_path / CODE_DIGESTS).unlink()
    (tmp_path / "ragcourt").mkdir()
    (tmp_path / "ragcourt/__init__.py").write_text("")
    assert refresh_code_digests(tmp_path) is False
    assert not (tmp_path / CODE_DIGESTS).exists()
