"""The tournament summary ``data/tournament/summary.json`` (stage ``tournament``) as a model.

:class:`TournamentSummary`: the judge, the field size, judge calls used by Swiss vs
round-robin (measured from match records and the memo; ``*_computed`` fields from the
N(N-1)/2 formula), error counts, Kendall τ-b between the Swiss and round-robin rankings and
the bootstrap settings (spec §6), and ``discrimination``: the Elo gaps of the control pairs
of known order (:mod:`ragcourt.tournament.discrimination`), and ``elo_gaps``: the gap of every
pair of real systems with its interval (:mod:`ragcourt.tournament.gaps`). Round-robin's
measured fields are null when ``tournament.round_robin`` is off. The writer builds the model
and writes ``model_dump(mode="json")``; a reader validates the file with ``model_validate``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ragcourt.core.fixed_model import FixedModel
from ragcourt.tournament.discrimination import TournamentDiscrimination
from ragcourt.tournament.gaps import EloGaps


class SwissSection(FixedModel):
    """The Swiss schedule: rounds played, why it stopped, matches, byes, judge calls."""

    rounds: int
    stopped: str
    matches: int
    failed_matches: int
    byes: int
    judge_calls: int
    judge_calls_executed: int
    error_judgements: int
    ranking: list[str]


class RoundRobinSection(FixedModel):
    """The round-robin schedule (measured fields null when it is off) and the formula counts."""

    enabled: bool
    matches: int | None
    failed_matches: int | None
    judge_calls: int | None
    judge_calls_executed: int | None
    error_judgements: int | None
    matches_computed: int
    judge_calls_computed: int
    ranking: list[str] | None


class KendallTau(FixedModel):
    """Kendall τ-b between two rankings and its p-value (None below two rated systems)."""

    tau_b: float | None
    p_value: float | None


class BootstrapSettings(FixedModel):
    """How the confidence intervals were resampled."""

    replicates: int
    seed: int
    level: float
    unit: str


class TournamentSummary(FixedModel):
    """``data/tournament/summary.json``."""

    judge: str
    outcome: Literal["ranked", "no valid judgements"]  # no winner without a valid judgement
    best_system: str | None  # rank 1 of the Swiss Elo; None when outcome is not "ranked"
    n_systems: int
    n_questions: int
    margin_threshold: float
    margin_note: str
    judge_call_unit: str
    judge_calls_note: str
    swiss: SwissSection
    round_robin: RoundRobinSection
    judge_calls_executed: int
    swiss_saving: float
    pairwise_rows: int
    error_rows: int
    error_reasons: dict[str, int]
    schemes: dict[str, int]
    order_agreement: float | None
    kendall_swiss_vs_rr: KendallTau | None
    kendall_swiss_vs_rr_elo: KendallTau | None
    bootstrap: BootstrapSettings
    bt_basis: str
    # the discrimination check on the control pairs of known order; None in files
    # written before the check existed
    discrimination: TournamentDiscrimination | None = Field(
        default=None, exclude_if=lambda v: v is None
    )
    # the Elo gap of every pair of real systems with its bootstrap interval
    # (:mod:`ragcourt.tournament.gaps`); None when nothing was ranked and in older files
    elo_gaps: EloGaps | None = Field(default=None, exclude_if=lambda v: v is None)
