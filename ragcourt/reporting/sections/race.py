"""Report section: the adaptive race (``ragcourt race``; :mod:`ragcourt.tournament.race`),
when ``data/race/summary.json`` exists: the winner, how the field narrowed round by round
(a plot), when and why each configuration left, the survivors with their intervals against
the leader, and the calls against a round-robin of the same questions."""

from __future__ import annotations

import json

from pydantic import ValidationError

from ragcourt.reporting.artifacts import Artifacts
from ragcourt.reporting.model import Figure, Section, Table, fmt, pct
from ragcourt.tournament.race import RaceResult

RACE_INTRO = (
    "The race asks questions in rounds and, after each, drops every configuration whose win "
    "rate against another is significantly below 1/2 (Hoeffding bound at "
    "alpha / (rounds × (N − 1)): the best configuration is dropped with probability at most "
    "alpha, however many rounds are looked at). Only the survivors answer and are judged in "
    "the next round."
)


def read_race(art: Artifacts) -> tuple[RaceResult | None, str | None]:
    """The live race's summary, else the replay's (None and a reason when it is unreadable;
    None, None when neither exists)."""
    path = art.path("race_summary")
    if not path.is_file():
        path = art.path("race_replay")
    if not path.is_file():
        return None, None
    try:
        return RaceResult.model_validate(json.loads(path.read_text(encoding="utf-8"))), None
    except (OSError, ValueError, ValidationError) as err:
        return None, f"{path.name}: unreadable race summary ({str(err).splitlines()[0]})"


def narrowing_plot(result: RaceResult) -> Figure:
    """One bar per configuration: the rounds it took part in (survivors to the last round,
    green; dropped ones grey, ending in the round they left)."""
    import matplotlib.pyplot as plt

    from ragcourt.reporting.plots import to_figure

    left = {e.system: e.round for e in result.exits}
    everyone = result.rounds[0].survivors if result.rounds else [s.system for s in result.survivors]
    order = sorted(everyone, key=lambda s: (left.get(s, result.rounds_played + 1), s))
    fig, ax = plt.subplots(figsize=(8, 1.0 + 0.32 * len(order)))
    for y, s in enumerate(order):
        end = left.get(s, result.rounds_played)
        ax.barh(y, end, left=0.5, color="#7f7f7f" if s in left else "#2ca02c", height=0.6)
    ax.set_yticks(range(len(order)), order)
    ax.set_xticks(range(1, result.rounds_played + 1))
    ax.set_xlim(0.5, result.rounds_played + 0.5)
    ax.set_xlabel("round (a grey bar ends in the round the configuration was dropped)")
    counts = [len(r.survivors) for r in result.rounds]
    ax.set_title("How the field narrowed: survivors per round " + " → ".join(map(str, counts)))
    fig.tight_layout()
    return to_figure(fig, "How the field narrowed over the race's rounds", name="race")


def race_section(art: Artifacts) -> Section:
    """The race's outcome, exits, survivors and calls (nothing to show when not run)."""
    sec = Section("race", "Race: the best configuration for a fraction of the calls", RACE_INTRO)
    result, problem = read_race(art)
    if result is None:
        sec.notes.append(problem or "no race was run (`ragcourt race --replay`)")
        return sec
    c, rr = result.calls, result.round_robin_calls
    sec.facts += [
        ("winner", result.winner or f"none separated (leader: {result.leader})"),
        ("stopped", result.stopped),
        ("rounds", f"{result.rounds_played} of {result.rounds_planned}"),
        ("questions", fmt(result.questions_used)),
        ("alpha (per test)", f"{fmt(result.alpha)} ({result.per_test_alpha:.2g})"),
        ("calls (answers + judge)", f"{fmt(c.total)} ({fmt(c.answers)} + {fmt(c.judge)})"),
        (
            "round-robin of the same questions",
            f"{fmt(rr.total)} ({fmt(rr.answers)} + {fmt(rr.judge)})",
        ),
        ("share of the round-robin's calls", pct(result.calls_fraction)),
    ]
    sec.figures.append(narrowing_plot(result))
    exits = [
        [e.system, fmt(e.round), e.against, fmt(e.questions), fmt(e.win_rate), fmt(e.upper_bound)]
        for e in result.exits
    ]
    if exits:
        cols = ["configuration", "left in round", "against", "questions", "win rate", "upper bound"]
        sec.tables.append(Table(cols, exits, "When and why each configuration left"))
    rows = [
        [
            s.system,
            fmt(s.bt),
            fmt(s.questions_vs_leader),
            fmt(s.win_rate_vs_leader),
            f"[{fmt(s.win_rate_lo)}, {fmt(s.win_rate_hi)}]",
            f"[{fmt(s.elo_gap_lo, 0)}, {fmt(s.elo_gap_hi, 0)}]",  # Elo points, whole
        ]
        for s in result.survivors
    ]
    cols = [
        "survivor",
        "Bradley-Terry",
        "questions vs leader",
        "win rate vs leader",
        "interval",
        "Elo gap interval",
    ]
    sec.tables.append(
        Table(
            cols, rows, f"Survivors (intervals at the per-test level {result.per_test_alpha:.2g})"
        )
    )
    return sec
