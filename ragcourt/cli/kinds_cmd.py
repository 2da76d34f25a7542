"""``ragcourt kinds [FAMILY]``: every pluggable family, its registered kinds (built-in and
entry-point plug-ins, the default marked: what a params key left null means) and each kind's
own settings (name, type, default, description), read from the settings model the kind
registered."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.table import Table

from ragcourt.cli.consoles import cli_console
from ragcourt.cli.errors import user_errors
from ragcourt.core.errors import ConfigError
from ragcourt.core.registry import Registry


def families() -> dict[str, tuple[str, Registry[Any]]]:
    """``{family: (params key that names a kind, registry)}`` of every pluggable family."""
    from ragcourt.answering.external.routes import ANSWER_ROUTES
    from ragcourt.answering.retriever_kinds import CONTROL_RETRIEVERS
    from ragcourt.answering.system_registry import SYSTEM_KINDS
    from ragcourt.judging.vocabulary import ANSWER_JUDGES, CORRECTNESS_GRADERS, RELEVANCE_GRADERS
    from ragcourt.qagen.filter_registry import QA_FILTERS
    from ragcourt.retrieval.retrieve import RETRIEVERS
    from ragcourt.tournament.pairwise import PAIRWISE_JUDGES

    table: dict[str, tuple[str, Registry[Any]]] = {
        "answer_judge": ("judge.judges.<name>.kind", ANSWER_JUDGES),
        "correctness_grader": ("judge.correctness_mode", CORRECTNESS_GRADERS),
        "relevance_grader": ("judge.relevance_grader", RELEVANCE_GRADERS),
        "pairwise_judge": ("tournament.judge", PAIRWISE_JUDGES),
        "qa_filter": ("qagen.filter_kinds", QA_FILTERS),
        "retriever": ("systems: retriever", RETRIEVERS),
        "control_retriever": ("controls.kinds", CONTROL_RETRIEVERS),
        "system_kind": ("systems: kind", SYSTEM_KINDS),
        "answer_route": ("systems: route", ANSWER_ROUTES),
    }
    return table


def _default_mark(roles: tuple[str, ...]) -> str:
    """`` (default)`` for the family's default kind, `` (default: role, ...)`` for a role's."""
    if not roles:
        return ""
    named = [r for r in roles if r]
    return " (default)" if not named else f" (default: {', '.join(named)})"


@user_errors
def kinds(
    family: Annotated[str | None, typer.Argument(help="one family (default: all)")] = None,
) -> None:
    """List the pluggable kinds and each kind's own settings."""
    known = families()
    if family is not None and family not in known:
        raise ConfigError(f"unknown family '{family}' (families: {', '.join(known)})")
    console = cli_console()
    for name, (key, registry) in known.items():
        if family is not None and name != family:
            continue
        table = Table(title=f"{name} (named by {key})", title_justify="left")
        for col in ("kind", "setting", "type", "default", "description"):
            table.add_column(col)
        for info in registry.described():
            label = info.kind + _default_mark(info.default_of)
            if not info.settings:
                table.add_row(label, "–", "", "", "no settings of its own")
            for i, s in enumerate(info.settings):
                table.add_row(label if i == 0 else "", s.name, s.type, s.default, s.description)
        console.print(table)
