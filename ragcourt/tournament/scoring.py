"""Per-question DICE scores from {A, B, Tie} probabilities (spec §6, DICE eqs. 2-4).

Labels: the judge answers with one of the single-token labels ``A``, ``B`` or ``C`` where
``C`` means *tie*. A one-letter tie label avoids the multi-token "Tie" problem: most
tokenizers split "Tie" into two pieces, so its first-token probability would not be
comparable with the one-token "A"/"B". Probabilities over the labels sum to 1.

Margin rule (threshold ``m``, default 0.1): ΔP = P_max − P_second.
ΔP >= m → hard score (1, 0), (0, 1) or (0.5, 0.5) for argmax A, B, Tie.
ΔP <  m → soft score s_A = p_A + p_Tie·p_A/(p_A + p_B), s_B = p_B + p_Tie·p_B/(p_A + p_B)
(and (0.5, 0.5) when p_A + p_B = 0). Either way s_A + s_B = 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

A, B, TIE = "A", "B", "C"
LABELS: tuple[str, str, str] = (A, B, TIE)
Scheme = Literal["hard", "soft"]
FloatArray = npt.NDArray[np.float64]
_EPS = 1e-12


@dataclass(frozen=True)
class Probs:
    """Probabilities of 'first-shown system better' (a), 'second better' (b) and tie."""

    a: float
    b: float
    tie: float

    @classmethod
    def from_labels(cls, probs: dict[str, float]) -> Probs:
        """From a ``{"A": .., "B": .., "C": ..}`` mapping, renormalised to sum to 1."""
        a, b, t = (max(float(probs.get(k, 0.0)), 0.0) for k in LABELS)
        total = a + b + t
        if not np.isfinite(total) or total <= 0:
            raise ValueError(f"label probabilities are empty or not finite: {probs}")
        return cls(a / total, b / total, t / total)

    def swapped(self) -> Probs:
        """The same verdict seen from the other presentation order (A and B exchanged)."""
        return Probs(self.b, self.a, self.tie)


@dataclass(frozen=True)
class QuestionScore:
    s_a: float
    s_b: float
    scheme: Scheme
    margin: float


def combine_orders(ab: Probs, ba: Probs) -> Probs:
    """Position-debiased probabilities: mean of order (A,B) and order (B,A) mapped back.

    In the swapped presentation the label "A" refers to system B, so its probabilities are
    swapped back before averaging: p_A = (P_ab(A) + P_ba(B))/2, p_B = (P_ab(B) + P_ba(A))/2,
    p_Tie = (P_ab(C) + P_ba(C))/2. A judge that always prefers the first slot thus cancels out.
    """
    back = ba.swapped()
    return Probs((ab.a + back.a) / 2, (ab.b + back.b) / 2, (ab.tie + back.tie) / 2)


def score_arrays(
    p_a: npt.ArrayLike, p_b: npt.ArrayLike, p_tie: npt.ArrayLike, margin: float = 0.1
) -> tuple[FloatArray, FloatArray, npt.NDArray[np.bool_], FloatArray]:
    """Vectorised margin rule: returns (s_a, s_b, is_hard, ΔP) for arrays of probabilities."""
    p = np.stack([np.asarray(p_a, float), np.asarray(p_b, float), np.asarray(p_tie, float)], -1)
    ordered = np.sort(p, axis=-1)
    delta = ordered[..., 2] - ordered[..., 1]
    hard = delta >= margin - _EPS  # ΔP = 0.5 − 0.4 must count as 0.1 despite float rounding
    # hard outcome per argmax label; ties in argmax cannot be hard for margin > 0
    hard_a = np.array([1.0, 0.0, 0.5])[np.argmax(p, axis=-1)]
    ab = p[..., 0] + p[..., 1]
    safe = np.where(ab > 0, ab, 1.0)
    soft_a = np.where(ab > 0, p[..., 0] + p[..., 2] * p[..., 0] / safe, 0.5)
    s_a = np.where(hard, hard_a, soft_a)
    return s_a, 1.0 - s_a, hard, delta


def score(probs: Probs, margin: float = 0.1) -> QuestionScore:
    """DICE score of one question from combined probabilities (see module docstring)."""
    s_a, s_b, hard, delta = score_arrays(probs.a, probs.b, probs.tie, margin)
    return QuestionScore(float(s_a), float(s_b), "hard" if bool(hard) else "soft", float(delta))


def ordered_logit(
    d: npt.ArrayLike, scale: float, tie_band: float
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Three-way probabilities from a quality difference d (first minus second shown).

    Ordered logit with cut points ±τ: P(A) = σ((d − τ)/s), P(B) = σ((−d − τ)/s),
    P(C) = 1 − P(A) − P(B), which is >= 0 whenever τ >= 0.
    """
    x = np.asarray(d, dtype=float)
    p_a = 0.5 * (1.0 + np.tanh((x - tie_band) / (2.0 * scale)))  # σ(z) = (1 + tanh(z/2))/2
    p_b = 0.5 * (1.0 + np.tanh((-x - tie_band) / (2.0 * scale)))
    return p_a, p_b, np.clip(1.0 - p_a - p_b, 0.0, 1.0)
