"""A kind's name is spelled in its own module and the registry only.

Params keys that choose a kind default to null, meaning the kind its own module registered
with ``default=True`` (or ``default=<role>``); and no code outside a kind's module compares a
kind-choosing params value (or its resolved kind) with a kind's name. The kinds are those of
the params-chosen families: answer judges, correctness graders, relevance graders, pairwise
judges and QA filters."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragcourt.core.registry import Registry
from ragcourt.judging.vocabulary import (
    ANSWER_JUDGES,
    CORRECTNESS_GRADERS,
    CORRECTNESS_MODE,
    RELEVANCE_GRADER,
    RELEVANCE_GRADERS,
)
from ragcourt.orchestration.params import Params
from ragcourt.qagen.filter_registry import FILTER_ROLES, QA_FILTERS, role_kinds
from ragcourt.tournament.pairwise import PAIRWISE_JUDGES, judge_kind

ROOT = Path(__file__).resolve().parents[2]
FAMILIES: tuple[Registry[Any], ...] = (
    ANSWER_JUDGES,
    CORRECTNESS_GRADERS,
    RELEVANCE_GRADERS,
    PAIRWISE_JUDGES,
    QA_FILTERS,
)
# attribute names whose value is a kind (params keys), and the functions that resolve one
KIND_ATTRS = {"correctness_mode", "relevance_grader", "kind"}
KIND_SECTIONS = {"filter_kinds", "tournament"}  # <section>.<attr> holds a kind
KIND_CALLS = {"kind", "judge_kind", "role_kinds"}  # CORRECTNESS_MODE.kind(params), ...


def _module_of(factory: object) -> str:
    return str(getattr(factory, "__module__", None) or factory.__func__.__module__)  # type: ignore[attr-defined]


def _owners() -> dict[str, set[str]]:
    """kind name -> the modules registering a kind of that name (any of the families)."""
    out: dict[str, set[str]] = {}
    for registry in FAMILIES:
        for kind, factory in registry.items():
            out.setdefault(kind, set()).add(_module_of(factory))
    return out


def _reads_a_kind(node: ast.AST) -> bool:
    """Whether ``node`` is a params value that names a kind, or a resolved kind."""
    if isinstance(node, ast.Subscript):
        return _reads_a_kind(node.value)
    if isinstance(node, ast.Call):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        return name in KIND_CALLS or (name == "getattr" and _reads_a_kind(node.args[0]))
    if isinstance(node, ast.Attribute):
        if node.attr in KIND_ATTRS:
            return True
        inner = node.value
        return isinstance(inner, ast.Attribute) and inner.attr in KIND_SECTIONS
    return False


def _constants(node: ast.AST) -> Iterator[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node.value
    elif isinstance(node, ast.Tuple | ast.List | ast.Set):
        for elt in node.elts:
            yield from _constants(elt)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_no_code_compares_a_kind_value_with_a_kind_name_outside_its_module() -> None:
    owners = _owners()
    found = []
    for path in sorted((ROOT / "ragcourt").rglob("*.py")):
        module = _module_name(path)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Compare):
                continue
            operands = [node.left, *node.comparators]
            if not any(_reads_a_kind(o) for o in operands):
                continue
            for name in (c for o in operands for c in _constants(o)):
                if name in owners and module not in owners[name]:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {name!r}")
    assert found == []


def test_the_scan_sees_a_spelled_kind() -> None:
    """The scan's own check: the comparisons it exists to catch are recognised."""
    caught = [
        "params.judge.correctness_mode == 'trained'",
        "p.qagen.filter_kinds.answerability != 'trained_answerability'",
        "RELEVANCE_GRADER.kind(params) in ('trained', 'reader')",
        "spec.kind == 'embedding_similarity'",
        "params.tournament.judge == 'llm'",
    ]
    for source in caught:
        compare = ast.parse(source, mode="eval").body
        assert isinstance(compare, ast.Compare)
        assert any(_reads_a_kind(o) for o in [compare.left, *compare.comparators]), source
    role = ast.parse("outcome.judge == 'relevance'", mode="eval").body
    assert isinstance(role, ast.Compare) and not _reads_a_kind(role.left)


@pytest.mark.parametrize(
    ("key", "value", "registry", "resolved"),
    [
        ("judge.correctness_mode", Params().judge.correctness_mode, CORRECTNESS_GRADERS,
         CORRECTNESS_MODE.kind(Params())),
        ("judge.relevance_grader", Params().judge.relevance_grader, RELEVANCE_GRADERS,
         RELEVANCE_GRADER.kind(Params())),
        ("tournament.judge", Params().tournament.judge, PAIRWISE_JUDGES, judge_kind(Params())),
    ],
)  # fmt: skip
def test_a_kind_key_defaults_to_the_kind_its_module_declares(
    key: str, value: str | None, registry: Registry[Any], resolved: str
) -> None:
    assert value is None, key
    assert resolved == registry.default()
    info = {i.kind: i for i in registry.described()}[resolved]
    assert info.default_of == ("",)


def test_each_filter_role_defaults_to_the_kind_its_module_declares() -> None:
    kinds = Params().qagen.filter_kinds
    assert all(getattr(kinds, role) is None for role in FILTER_ROLES)
    assert role_kinds(kinds) == {role: QA_FILTERS.default(role) for role in FILTER_ROLES}


def test_a_family_has_one_default_per_role_and_kinds_marks_it() -> None:
    from typer.testing import CliRunner

    from ragcourt.cli.main import app
    from ragcourt.core.errors import ConfigError

    reg: Registry[object] = Registry("widget")
    reg.register("first", default=True)(object())
    with pytest.raises(ConfigError, match="'second' and 'first' both claim to be the default"):
        reg.register("second", default=True)(object())
    reg.register("second", default="side")(object())
    assert (reg.default(), reg.default("side"), reg.resolve(None, "k", "side")) == (
        "first",
        "second",
        "second",
    )
    with pytest.raises(ConfigError, match=r"^widget: no kind is registered as the default of"):
        reg.default("other")
    out = CliRunner().invoke(app, ["kinds", "pairwise_judge"], terminal_width=200)
    assert out.exit_code == 0 and f"{PAIRWISE_JUDGES.default()} (default)" in out.output
