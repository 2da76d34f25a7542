"""The judge summary ``data/judge/summary.json`` (stage ``judge_summary``) as a model.

:class:`JudgeSummary` has one section per judging step: ``dafe`` (arbitration counts, spec §4),
``correctness``, ``relevance`` and ``udcg`` (spec §5), ``accuracy_per_system`` and
``spearman_with_correctness`` (spec §7), ``retrieval_not_judged`` (systems without any
passage, whose retrieval is not judged), and ``discrimination`` (the DAFE check on the control
pairs of known order: :mod:`ragcourt.judging.discrimination`). The writer builds the model and
writes ``model_dump(mode="json")``; a reader validates the file with
``JudgeSummary.model_validate``.
Dicts keyed by data (system names, judge names, metric labels, grades) stay ``dict[str, ...]``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ragcourt.core.fixed_model import FixedModel
from ragcourt.judging.discrimination import DafeDiscrimination


class JudgeAgreement(FixedModel):
    """How often one judge's valid verdicts equal the final DAFE verdict."""

    n: int
    agreement_with_final: float


class DafeSection(FixedModel):
    """Run-level DAFE figures (:func:`ragcourt.judging.dafe.dafe_summary`) plus the roles
    and the answer rows, ``input_error_rows`` of them not judged (the answer failed)."""

    items: int
    final_verdicts: int
    error_rows: int
    degraded: int
    both_primaries_ok: int
    disagreements: int
    disagreement_rate: float | None
    arbitrator_calls: int
    judge_calls: int
    judge_calls_always_three: int
    judge_calls_saved: int
    judge_calls_saved_fraction: float | None
    judge_calls_per_verdict: float | None
    per_judge: dict[str, JudgeAgreement]
    llm_judge_calls: int
    llm_judge_calls_always_three: int
    primaries: list[str]
    arbitrator: str
    # LLM judge verdicts by form (probability | generated); {}: written before forms
    llm_verdict_forms: dict[str, int] = Field(default_factory=dict)
    answer_rows: int
    input_error_rows: int


class CorrectnessSection(FixedModel):
    """Correctness grading: mode, model (or the similarity judge), rows scored / failed, mean."""

    mode: str
    model: str
    prompt_version: str
    # probability | generated | none (no LLM / input error) -> rows; {}: written before forms
    forms: dict[str, int] = Field(default_factory=dict)
    rows: int
    scored: int
    errors: int
    mean: float | None


class RelevanceSection(FixedModel):
    """Passage relevance: judgments once per (question, chunk); ``grades`` counts each grade
    ("0", "1", "2") and failures ("error")."""

    model: str
    unique_passages: int
    passage_rows_across_systems: int
    judgments_saved_by_dedup: int
    forms: dict[str, int] = Field(default_factory=dict)  # probability | generated -> passages
    errors: int
    grades: dict[str, int]


class ThetaNotFitted(FixedModel):
    """``judge.udcg.fit_theta`` is off: no fit was tried."""

    fitted: Literal[False]


class ThetaFitReport(FixedModel):
    """A UDCGθ fit attempt: position weights (None when not fitted, ``reason`` says why)."""

    fitted: bool
    k: int
    pairs: int
    alpha: list[float] | None
    beta: list[float] | None
    reason: str | None
    target: str
    scores: str


class UdcgSection(FixedModel):
    """UDCG settings, rows scored / failed, mean, and the UDCGθ report."""

    model: str
    gamma: float
    k: int
    relevance_threshold: int
    rows: int
    scored: int
    errors: int
    mean: float | None
    theta: ThetaFitReport | ThetaNotFitted


class SpearmanWithCorrectness(FixedModel):
    """Spearman rho of one retrieval metric with correctness, its SE and the pairs used."""

    spearman: float | None
    se: float | None
    n: int


class GradingFallbacks(FixedModel):
    """How one judge column was graded: ``rows`` with a grading method, ``fallback_rows`` of
    them from floors or fallbacks (:func:`ragcourt.llm.grading_methods.is_fallback`), their
    ``share`` (None without rows) and the rows per method (a UDCG context: its passages'
    methods joined by ",")."""

    rows: int
    fallback_rows: int
    share: float | None
    methods: dict[str, int]


class JudgeSummary(FixedModel):
    """``data/judge/summary.json``."""

    dafe: DafeSection
    accuracy_per_system: dict[str, float | None]
    correctness: CorrectnessSection
    relevance: RelevanceSection
    udcg: UdcgSection
    spearman_with_correctness: dict[str, SpearmanWithCorrectness]
    # system -> why its retrieval was not judged (it returned no passages at all:
    # ragcourt.judging.retrieval_skips); left out of the file when no system was skipped
    retrieval_not_judged: dict[str, str] = Field(default_factory=dict, exclude_if=lambda v: not v)
    # DAFE accuracy on the control pairs of known order; None in files written
    # before the check existed
    discrimination: DafeDiscrimination | None = Field(default=None, exclude_if=lambda v: v is None)
    # per judge column (correctness, relevance, udcg): rows graded from floors or fallbacks;
    # {} (left out of the file) in files written before grading methods were recorded
    grading_fallbacks: dict[str, GradingFallbacks] = Field(
        default_factory=dict, exclude_if=lambda v: not v
    )
