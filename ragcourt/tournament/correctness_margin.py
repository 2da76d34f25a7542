"""Pairwise judge ``correctness_margin``: verdicts from per-answer correctness scores.

A non-LLM judge derived from ``data/judge/correctness.parquet`` via an ordered logit on the
difference of the two answers' correctness (:func:`ordered_logit_probs`). Deterministic and
symmetric, so it has no position bias. Its settings (``tournament.judge_settings``) are
:class:`CorrectnessMarginSettings`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import polars as pl
from pydantic import BaseModel, ConfigDict, Field

from ragcourt.core.errors import ConfigError, SchemaError
from ragcourt.core.schemas import check_one_row_per_answer
from ragcourt.tournament.pairwise import (
    PAIRWISE_JUDGES,
    OrderKey,
    OrderVerdict,
    PairwiseContext,
    judge_settings,
)
from ragcourt.tournament.scoring import Probs, ordered_logit

CORRECTNESS_MARGIN = "correctness_margin"  # the kind (the default of tournament.judge)


def ordered_logit_probs(d: float, scale: float, tie_band: float) -> Probs:
    """Pseudo-probabilities from a correctness difference d = c_first − c_second.

    Ordered logit with cut points ±``tie_band`` (τ) and ``scale`` (s):
    P(A) = σ((d − τ)/s), P(B) = σ((−d − τ)/s), P(C) = 1 − P(A) − P(B) (>= 0 for τ >= 0).
    With the defaults s = τ = 0.1 and the RAGalyst rubric grid (steps of 0.2-0.3), any rubric
    step is a hard win (d = 0.1 already gives ΔP = 0.12), |d| <= 0.03 a hard tie, and
    differences in between fall under the soft rule.
    """
    p_a, p_b, p_t = ordered_logit(d, scale, tie_band)
    return Probs(float(p_a), float(p_b), float(p_t))


class CorrectnessMarginSettings(BaseModel):
    """The ``correctness_margin`` judge's settings (``tournament.judge_settings``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    scale: float = Field(default=0.1, gt=0, description="ordered-logit scale s")
    tie_band: float = Field(
        default=0.1, ge=0, description="ordered-logit cut point τ: |d| well below it is a tie"
    )


class CorrectnessMarginJudge:
    """Pairwise verdicts from per-answer correctness scores (table: system, question_id,
    correctness float in [0, 1] or null, error). Missing, null, errored or out-of-range
    scores on either side give an error verdict naming the system and question."""

    name = CORRECTNESS_MARGIN

    def __init__(self, correctness: pl.DataFrame, scale: float = 0.1, tie_band: float = 0.1):
        need = {"system", "question_id", "correctness", "error"}
        if missing := sorted(need - set(correctness.columns)):
            raise SchemaError(f"correctness table: missing column(s) {missing}")
        if scale <= 0 or tie_band < 0:
            raise ConfigError(f"{CORRECTNESS_MARGIN}: scale must be > 0, tie band >= 0")
        check_one_row_per_answer(correctness, "correctness table", "row")
        self.scale, self.tie_band = scale, tie_band
        self._scores: dict[tuple[str, str], tuple[float | None, str | None]] = {
            (s, q): (c, e)
            for s, q, c, e in correctness.select(
                "system", "question_id", pl.col("correctness").cast(pl.Float64), "error"
            ).iter_rows()
        }

    def _lookup(self, system: str, qid: str) -> tuple[float | None, str | None]:
        if (system, qid) not in self._scores:
            return None, f"no correctness score for system '{system}' on question '{qid}'"
        c, err = self._scores[(system, qid)]
        if err:
            return None, f"correctness of '{system}' on '{qid}' failed: {err}"
        if c is None or not math.isfinite(c):
            return None, f"correctness of '{system}' on '{qid}' is null"
        if not 0.0 <= c <= 1.0:
            return None, f"correctness of '{system}' on '{qid}' is {c}, outside [0, 1]"
        return c, None

    def judge(self, keys: Sequence[OrderKey]) -> list[OrderVerdict]:
        out = []
        for key in keys:
            c1, e1 = self._lookup(key.first, key.question_id)
            c2, e2 = self._lookup(key.second, key.question_id)
            if c1 is None or c2 is None:
                out.append(OrderVerdict(None, error="; ".join(e for e in (e1, e2) if e)))
                continue
            d = c1 - c2
            why = f"correctness A={c1:.2f} vs B={c2:.2f} (d={d:+.2f})"
            out.append(OrderVerdict(ordered_logit_probs(d, self.scale, self.tie_band), why))
        return out


@PAIRWISE_JUDGES.register(CORRECTNESS_MARGIN, config=CorrectnessMarginSettings, default=True)
def _correctness_margin(ctx: PairwiseContext) -> CorrectnessMarginJudge:
    settings = judge_settings(CORRECTNESS_MARGIN, ctx.params)
    assert isinstance(settings, CorrectnessMarginSettings)
    correctness = ctx.correctness_table()
    if correctness is None:
        raise ConfigError(f"tournament.judge '{CORRECTNESS_MARGIN}' needs the correctness table")
    return CorrectnessMarginJudge(correctness, settings.scale, settings.tie_band)
