"""The ``tournament``, ``gate`` and ``race`` sections of ``params.yaml``."""

from __future__ import annotations

from typing import Any, Literal, Protocol

from pydantic import (
    Field,
    StrictBool,
    StrictInt,
)

from ragcourt.core.params import (
    NonEmptyStr,
    Strict,
)
from ragcourt.llm.params import LLMView


class TournamentParams(Strict):
    """DICE tournament (spec §6). ``judge``: a kind of the pairwise judge registry
    (:data:`ragcourt.tournament.pairwise.PAIRWISE_JUDGES`; null: the kind registered as its
    default); ``judge_settings``: that kind's own settings, validated against the model it
    registered (``ragcourt kinds`` lists them and marks the default)."""

    judge: NonEmptyStr | None = None
    judge_settings: dict[str, Any] = Field(default_factory=dict)
    model: str | None = None
    # None: max_rounds(N) when round_robin (every pair is judged anyway), else ceil(log2 N) + 1
    rounds: StrictInt | None = Field(default=None, gt=0, le=10_000)
    until_stable: StrictInt = Field(
        default=0, ge=0
    )  # >0: stop once ranking unchanged this many rounds
    margin: float = Field(default=0.1, ge=0, le=1)
    k_factor: float = Field(default=32.0, gt=0, le=10_000)
    upset_weighting: StrictBool = True
    initial_elo: float = Field(default=1500.0, ge=-1_000_000, le=1_000_000)
    bootstrap: StrictInt = Field(default=200, ge=0, le=1_000_000)
    seed: StrictInt = 0
    round_robin: StrictBool = True
    prompt_version: str = "v2"  # v2: question, evidence and answers fenced
    evidence_passages: StrictInt = Field(default=3, ge=0)  # retrieved passages shown per system
    evidence_chars: StrictInt = Field(default=600, gt=0)  # characters kept per passage
    analysis_max_tokens: StrictInt = Field(default=256, gt=0)
    # false: no stage-I analysis; the label is read right after the answers (one call per order;
    # needs a prompt version with a `direct` template, v3+). true: the DICE two-stage form.
    analysis: StrictBool = True


class GateParams(Strict):
    """The release gate (``ragcourt gate``; spec §6, "Gate"): each candidate against
    ``baseline`` (null: the command's ``--baseline`` is required). ``margin``: Elo points a
    candidate may trail by (Elo view); ``accuracy_margin``: the same in DAFE accuracy (0-1).
    ``require_validity``: a run without pairs of controls fails the gate (exit 3)."""

    baseline: str | None = None
    view: Literal["elo", "dafe"] = "elo"
    margin: float = Field(default=0.0, ge=0, le=10_000)
    accuracy_margin: float = Field(default=0.0, ge=0, le=1)
    require_validity: StrictBool = False


class RaceParams(Strict):
    """The adaptive race (``ragcourt race``; spec §6, "Race"): rounds of ``round_questions``
    fresh questions, at most ``rounds`` of them (the planned looks of the Bonferroni rule);
    each survivor plays the ``opponents`` best-rated other survivors; a configuration is
    dropped when its win rate against another is below 1/2 at level
    ``alpha`` / (rounds · (N − 1)) (Hoeffding). ``max_calls``: stop before a round that
    would pass this many answer + judge calls (null: no call budget)."""

    round_questions: StrictInt = Field(default=10, gt=0, le=1_000_000)
    rounds: StrictInt = Field(default=5, gt=0, le=10_000)
    alpha: float = Field(default=0.05, gt=0, lt=1)
    opponents: StrictInt = Field(default=2, ge=1, le=1_000)
    max_calls: StrictInt | None = Field(default=None, gt=0)
    seed: StrictInt = 0


class TournamentView(LLMView, Protocol):
    """The params the tournament and the gate read: llm's view, ``tournament``, ``gate`` and
    ``race``."""

    tournament: TournamentParams
    gate: GateParams
    race: RaceParams
