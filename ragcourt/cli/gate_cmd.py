"""``ragcourt gate``: fail a CI job when a candidate is significantly worse than the baseline.

Reads a finished run's artifacts through the catalog (the tournament summary; for the DAFE
view the verdicts table and the judge summary) and makes no model call. Prints one line per
candidate and the decision; ``--junit PATH`` also writes a JUnit XML report. Exit codes
(:mod:`ragcourt.tournament.gate`): 0 no candidate worse, 1 a candidate significantly worse,
3 the validity check failed (controls not separated), 4 cannot decide (not enough questions),
2 a user error (unknown baseline, missing artifact), as every command.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from pydantic import BaseModel, ValidationError

from ragcourt.cli.errors import user_errors
from ragcourt.core import catalog
from ragcourt.core.catalog import DEFAULT_PARAMS_FILE
from ragcourt.core.errors import RagcourtError

M = TypeVar("M", bound=BaseModel)


def read_summary(name: str, model: type[M]) -> M:
    """The catalogued JSON summary ``name`` as ``model``; one-line errors naming the file."""
    spec = catalog.spec(name)
    path = catalog.path(name)
    if not path.is_file():
        raise RagcourtError(f"{path}: not found (written by stage '{spec.stage}'; run it first)")
    try:
        return model.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, json.JSONDecodeError) as err:
        raise RagcourtError(f"{path}: unreadable JSON ({err})") from None
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(x) for x in first["loc"]) or "(top level)"
        raise RagcourtError(
            f"{path}: not a {spec.stage} summary ({where}: {first['msg']})"
        ) from None


def evaluate(
    params_file: Path,
    baseline: str | None,
    margin: float | None,
    view: str | None,
    candidates: list[str] | None,
    require_validity: bool | None,
) -> Any:
    """The :class:`~ragcourt.tournament.gate.GateResult` of the run in the working directory;
    command options override ``gate.*`` params."""
    from ragcourt.core.io import read_table
    from ragcourt.judging.summaries import JudgeSummary
    from ragcourt.orchestration.params import load_params
    from ragcourt.tournament.gate import dafe_gate, elo_gate
    from ragcourt.tournament.summaries import TournamentSummary

    params = load_params(params_file)
    gp = params.gate
    base = baseline if baseline is not None else gp.baseline
    if base is None:
        raise RagcourtError(f"{params_file}: no baseline: set gate.baseline or pass --baseline")
    chosen_view = view or gp.view
    strict = gp.require_validity if require_validity is None else require_validity
    if chosen_view == "elo":
        summary = read_summary("tournament_summary", TournamentSummary)
        m = gp.margin if margin is None else margin
        return elo_gate(summary, base, m, candidates or None, strict)
    if chosen_view != "dafe":
        raise RagcourtError(f"--view must be 'elo' or 'dafe', got '{chosen_view}'")
    judge = read_summary("judge_summary", JudgeSummary)
    verdicts = read_table(catalog.path("verdicts"), "verdicts")
    m = gp.accuracy_margin if margin is None else margin
    cp = params.controls
    return dafe_gate(
        verdicts, judge.discrimination, base, m, cp.bootstrap, cp.seed, candidates or None, strict
    )


@user_errors
def gate(
    baseline: Annotated[
        str | None, typer.Option(help="the system in production (default: gate.baseline)")
    ] = None,
    margin: Annotated[
        float | None,
        typer.Option(help="how far a candidate may trail: Elo points (elo), accuracy (dafe)"),
    ] = None,
    view: Annotated[
        str | None, typer.Option(help="elo (Swiss Elo gaps) or dafe (DAFE accuracy)")
    ] = None,
    candidate: Annotated[
        list[str] | None,
        typer.Option("--candidate", help="only these systems (repeatable; default: all)"),
    ] = None,
    junit: Annotated[Path | None, typer.Option(help="also write a JUnit XML report here")] = None,
    require_validity: Annotated[
        bool | None,
        typer.Option(
            "--require-validity/--no-require-validity",
            help="fail (exit 3) when the run has no pairs of controls to check",
        ),
    ] = None,
    params: Annotated[Path, typer.Option("--params", help="params file")] = Path(
        DEFAULT_PARAMS_FILE
    ),
) -> None:
    """Is a candidate significantly worse than the baseline? Exit 0 no, 1 yes, 3 the validity
    check failed, 4 cannot decide (not enough questions). Makes no model call."""
    from ragcourt.tournament.gate import lines
    from ragcourt.tournament.gate_junit import write_junit

    result = evaluate(params, baseline, margin, view, candidate, require_validity)
    for line in lines(result):
        typer.echo(line)
    if junit is not None:
        write_junit(result, junit)
        typer.echo(f"wrote {junit}")
    raise typer.Exit(result.exit_code)
