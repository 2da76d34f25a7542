"""Registries import their built-in kinds on first lookup and plug-ins from outside the package
through entry points of group ``ragcourt.plugins``; unknown kinds are one-line errors listing
the registered ones."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragcourt.core import registry
from ragcourt.core.errors import ConfigError
from ragcourt.core.registry import PLUGIN_GROUP, Registry
from ragcourt.judging.builders import build_grader, check_judge_params
from ragcourt.judging.params import JudgeParams
from ragcourt.judging.vocabulary import CORRECTNESS_GRADERS, AnswerItem, JudgeContext
from ragcourt.orchestration.params import Params

PLUGIN_MODULE = """
from dataclasses import dataclass

from ragcourt.judging.vocabulary import CORRECTNESS_GRADERS, CorrectnessGrade


@dataclass
class HalfGrader:
    def grade(self, items, verdicts_of):
        return [CorrectnessGrade(0.5, "always half") for _ in items]


@CORRECTNESS_GRADERS.register("test_half")
def _half(ctx):
    return HalfGrader()
"""


def _install_plugin(root: Path, dist: str, module: str, source: str) -> None:
    """A plug-in distribution as an installer leaves it: the module plus a ``.dist-info``
    whose ``entry_points.txt`` names the module under ``ragcourt.plugins``."""
    (root / f"{module}.py").write_text(source, encoding="utf-8")
    info = root / f"{dist}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{PLUGIN_GROUP}]\n{dist} = {module}\n")


@pytest.fixture
def plugin_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """sys.path with ``tmp_path`` first; the correctness registry and the plug-in loader are
    restored afterwards (what a plug-in registers does not leak into other tests)."""
    CORRECTNESS_GRADERS.load()
    monkeypatch.setattr(CORRECTNESS_GRADERS, "_factories", dict(CORRECTNESS_GRADERS._factories))
    monkeypatch.syspath_prepend(str(tmp_path))
    registry.forget_entry_point_plugins()
    yield tmp_path
    for name in ("tiny_ragcourt_grader", "tiny_broken_plugin"):
        sys.modules.pop(name, None)
    registry.forget_entry_point_plugins()


def test_an_installed_plugin_package_registers_its_correctness_grader(plugin_env: Path) -> None:
    assert "test_half" not in CORRECTNESS_GRADERS._factories
    _install_plugin(plugin_env, "tiny-ragcourt-grader", "tiny_ragcourt_grader", PLUGIN_MODULE)
    registry.forget_entry_point_plugins()
    assert CORRECTNESS_GRADERS.kinds() == [
        "expected",
        "rubric",
        "similarity",
        "test_half",
        "trained",
    ]
    params = JudgeParams(correctness_mode="test_half")
    check_judge_params(params)
    grader = build_grader(JudgeContext(Params(judge=params)))
    grades = grader.grade([AnswerItem("q", "a", ("r",))] * 2, lambda name: [])
    assert [g.score for g in grades] == [0.5, 0.5]


def test_a_plugin_that_fails_to_import_is_one_line_naming_the_entry_point(
    plugin_env: Path,
) -> None:
    _install_plugin(plugin_env, "tiny-broken", "tiny_broken_plugin", "import no_such_module_x\n")
    with pytest.raises(ConfigError) as err:
        CORRECTNESS_GRADERS.kinds()
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith(
        "entry point 'tiny-broken' (ragcourt.plugins): cannot load 'tiny_broken_plugin' "
        "(ModuleNotFoundError:"
    )


def test_unknown_correctness_mode_lists_the_registered_graders() -> None:
    with pytest.raises(ConfigError) as err:
        check_judge_params(JudgeParams(correctness_mode="x"))
    assert str(err.value) == (
        "judge.correctness_mode: unknown correctness grader 'x' "
        "(registered: expected, rubric, similarity, trained)"
    )


def test_builtins_are_imported_on_first_lookup_and_a_package_stands_for_its_modules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "tiny_home.py").write_text(
        "from ragcourt.core.registry import Registry\n"
        "THINGS = Registry('thing', builtins=('tiny_kinds',))\n"
    )
    (tmp_path / "tiny_kinds").mkdir()
    (tmp_path / "tiny_kinds/__init__.py").write_text('"""Kinds of thing."""\n')
    for kind in ("alpha", "beta"):
        (tmp_path / f"tiny_kinds/{kind}.py").write_text(
            f"from tiny_home import THINGS\nTHINGS.register('{kind}')(object())\n"
        )
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("tiny_home", "tiny_kinds", "tiny_kinds.alpha", "tiny_kinds.beta"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    import tiny_home  # type: ignore[import-not-found]

    assert "tiny_kinds" not in sys.modules  # declaring a registry imports nothing
    assert tiny_home.THINGS.kinds() == ["alpha", "beta"]
    assert {"tiny_kinds.alpha", "tiny_kinds.beta"} <= set(sys.modules)
    for name in ("tiny_home", "tiny_kinds", "tiny_kinds.alpha", "tiny_kinds.beta"):
        sys.modules.pop(name, None)


def test_a_lookup_during_another_threads_first_load_waits_for_every_builtin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    (tmp_path / "slow_home.py").write_text(
        "from ragcourt.core.registry import Registry\n"
        "THINGS = Registry('thing', builtins=('slow_kinds',))\n"
    )
    (tmp_path / "slow_kinds.py").write_text(
        "import time\nfrom slow_home import THINGS\n"
        "time.sleep(0.5)  # a slow import: the registry is half filled meanwhile\n"
        "THINGS.register('alpha')(object())\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("slow_home", "slow_kinds"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    import slow_home  # type: ignore[import-not-found]

    seen: list[list[str]] = []
    threads = [
        threading.Thread(target=lambda: seen.append(slow_home.THINGS.kinds())) for _ in range(2)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == [["alpha"], ["alpha"]]
    for name in ("slow_home", "slow_kinds"):
        sys.modules.pop(name, None)


def test_register_refuses_a_taken_kind_and_bad_names() -> None:
    reg: Registry[object] = Registry("thing")
    first = object()
    assert reg.register("a-b_1")(first) is first
    assert reg.register("a-b_1")(first) is first  # same object again: no-op
    with pytest.raises(ConfigError, match=r"^thing kind 'a-b_1' is already registered$"):
        reg.register("a-b_1")(object())
    with pytest.raises(ConfigError, match=r"^thing: kind 'a b' must be letters"):
        reg.register("a b")
    assert reg.check("a-b_1", "k") == "a-b_1"
    with pytest.raises(ConfigError, match=r"^k: unknown thing 3 \(registered: a-b_1\)$"):
        reg.check(3, "k")
