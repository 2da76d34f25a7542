"""``ragcourt race``: the adaptive race (spec §6, "Race").

Live (the default): the ``race`` stage (:mod:`ragcourt.tournament.race_live`, what ``dvc repro
race`` runs): only the survivors answer and are judged on each round's questions; writes
``data/race/summary.json`` (catalog ``race_summary``) and every round's files.

``--replay``: the race on a finished run's pairwise judgements, with no model call. It needs a
run with ``tournament.round_robin`` on (every pair judged on every question); on a
deterministic judge it decides what a live race would, and the calls it reports are those a
live race would spend. Writes ``data/race/replay.json`` (catalog ``race_replay``).
The report shows the live race, else the replay.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ragcourt.cli.errors import user_errors
from ragcourt.cli.gate_cmd import read_summary
from ragcourt.core import catalog
from ragcourt.core.catalog import DEFAULT_PARAMS_FILE
from ragcourt.core.errors import RagcourtError


@user_errors
def race(
    replay: Annotated[
        bool, typer.Option("--replay", help="race on the finished run's pairwise judgements")
    ] = False,
    rounds: Annotated[int | None, typer.Option(help="planned rounds (race.rounds)")] = None,
    round_questions: Annotated[
        int | None, typer.Option(help="questions per round (race.round_questions)")
    ] = None,
    alpha: Annotated[
        float | None, typer.Option(help="chance of dropping the best (race.alpha)")
    ] = None,
    opponents: Annotated[
        int | None, typer.Option(help="best-ranked survivors each plays (race.opponents)")
    ] = None,
    seed: Annotated[int | None, typer.Option(help="question order (race.seed)")] = None,
    include_controls: Annotated[
        bool, typer.Option("--include-controls", help="race the control systems too")
    ] = False,
    params: Annotated[Path, typer.Option("--params", help="params file")] = Path(
        DEFAULT_PARAMS_FILE
    ),
) -> None:
    """Find the best configuration in rounds, dropping those significantly behind (live: only
    the survivors answer and are judged; --replay: on a finished run's judgements)."""
    from ragcourt.core.io import read_table, write_json
    from ragcourt.orchestration.params import load_params
    from ragcourt.tournament.params import RaceParams
    from ragcourt.tournament.race import race_lines, run_race
    from ragcourt.tournament.race_replay import pair_scores, replay_play, replay_systems
    from ragcourt.tournament.summaries import TournamentSummary

    loaded = load_params(params)
    rp = loaded.race
    given = {
        "rounds": rounds,
        "round_questions": round_questions,
        "alpha": alpha,
        "opponents": opponents,
        "seed": seed,
    }
    rp = RaceParams.model_validate(
        rp.model_dump() | {k: v for k, v in given.items() if v is not None}
    )
    if not replay:
        from ragcourt.tournament.race_live import run as run_live

        live = run_live(loaded.model_copy(update={"race": rp}), include_controls=include_controls)
        for line in race_lines(live):
            typer.echo(line)
        typer.echo(f"wrote {catalog.path('race_summary')}")
        return
    summary = read_summary("tournament_summary", TournamentSummary)
    controls = summary.discrimination.controls if summary.discrimination is not None else {}
    source = catalog.path("pairwise")
    pairwise = read_table(source, "pairwise")
    systems, questions = replay_systems(pairwise, list(controls), include_controls)
    if len(systems) < 2:
        raise RagcourtError(f"{source}: a race needs at least 2 systems, found {systems}")
    result = run_race(systems, questions, replay_play(pair_scores(pairwise), str(source)), rp)
    out = catalog.path("race_replay")
    write_json(result.model_dump(mode="json"), out)
    for line in race_lines(result):
        typer.echo(line)
    rr = summary.round_robin.ranking
    if rr:
        best = next((s for s in rr if s in systems), None)
        typer.echo(f"round-robin best on all {summary.n_questions} questions: {best}")
    typer.echo(f"wrote {out}")
