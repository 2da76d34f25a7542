"""The race replayed on a finished run's judgements (``ragcourt race --replay``): no model call.

The pairwise table of a run with ``tournament.round_robin`` on holds every pair judged on
every question. Replaying :func:`ragcourt.tournament.race.run_race` on it gives exactly the
decisions an adaptive race with the same deterministic judge would take on the same question
draw (its per-question scores are those judgements), and the answer + judge calls it would
have spent, against the round-robin of the same questions. A failed judgement stays out of
the pair's count (never a tie). A pair the run did not judge is a one-line error.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from ragcourt.core.errors import RagcourtError
from ragcourt.tournament.race import PairOutcome, PlayPairs
from ragcourt.tournament.swiss import Pair

#: (system_a, system_b, question) -> a's score; None for a failed judgement
Scores = dict[tuple[str, str, str], float | None]


def pair_scores(pairwise: pl.DataFrame) -> Scores:
    """Both orientations of every judged (pair, question): s_ab and s_ba = 1 − s_ab."""
    out: Scores = {}
    cols = ("system_a", "system_b", "question_id", "score_a", "score_b", "error")
    for a, b, q, sa, sb, err in pairwise.select(*cols).iter_rows():
        ok = err is None and sa is not None and sb is not None
        out[(a, b, q)] = float(sa) if ok else None
        out[(b, a, q)] = float(sb) if ok else None
    return out


def replay_play(scores: Scores, source: str) -> PlayPairs:
    """A :data:`~ragcourt.tournament.race.PlayPairs` reading ``scores`` (``source`` names the
    table in errors)."""

    def play(_round: int, pairs: list[Pair], questions: list[str]) -> list[PairOutcome]:
        out = []
        for a, b in pairs:
            total, n, errors = 0.0, 0, 0
            for q in questions:
                if (a, b, q) not in scores:
                    raise RagcourtError(
                        f"{source}: pair ({a}, {b}) was not judged on question {q}; a replay "
                        "needs every pair judged (tournament.round_robin: true)"
                    )
                s = scores[(a, b, q)]
                if s is None:
                    errors += 1
                else:
                    total, n = total + s, n + 1
            out.append(PairOutcome(a, b, total, n, errors))
        return out

    return play


def replay_systems(
    pairwise: pl.DataFrame, controls: Sequence[str], include_controls: bool = False
) -> tuple[list[str], list[str]]:
    """The systems to race (sorted; controls left out unless asked) and the questions."""
    systems = sorted(set(pairwise["system_a"].to_list()) | set(pairwise["system_b"].to_list()))
    if not include_controls:
        systems = [s for s in systems if s not in set(controls)]
    return systems, sorted(set(pairwise["question_id"].to_list()))
