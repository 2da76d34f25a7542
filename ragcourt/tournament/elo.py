"""Elo with match scores (spec §6, DICE eqs. 5-6) and upset-weighted K.

Expected score: E_A = 1 / (1 + 10^((R_B − R_A)/400)), so the higher-rated side expects
more than 0.5 (the sign RAGElo's tournament loop inverts).
Update after a match of n judged questions: R_A' = R_A + K_eff·(S_A/n − E_A) and
R_B' = R_B + K_eff·(S_B/n − E_B); per-question scores sum to 1, so S_A + S_B = n and the
update is zero-sum.
Upset weighting (the paper's idea; the authors' unused code scales K with asymmetric
bonuses): K_eff = K·(1 + |R_A − R_B|/400) when the lower-rated side takes more than half of
the match score, else K_eff = K. Both sides use the same K_eff, so total rating is conserved.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

ELO_SCALE = 400.0
FloatArray = npt.NDArray[np.float64]


def expected_score(r_a: float, r_b: float) -> float:
    """E_A = 1 / (1 + 10^((R_B − R_A)/400))."""
    return 1.0 / (1.0 + float(10.0 ** ((r_b - r_a) / ELO_SCALE)))


def upset_k(k: float, r_a: npt.ArrayLike, r_b: npt.ArrayLike, frac_a: npt.ArrayLike) -> Any:
    """K·(1 + |R_A − R_B|/400) where the lower-rated side took more than half the match, else K."""
    ra, rb, fa = np.asarray(r_a, float), np.asarray(r_b, float), np.asarray(frac_a, float)
    upset = ((ra < rb) & (fa > 0.5)) | ((rb < ra) & (fa < 0.5))
    out = np.where(upset, k * (1.0 + np.abs(ra - rb) / ELO_SCALE), float(k))
    return float(out) if out.ndim == 0 else out


def update_arrays(
    r_a: npt.ArrayLike,
    r_b: npt.ArrayLike,
    s_a: npt.ArrayLike,
    s_b: npt.ArrayLike,
    k: float = 32.0,
    upset_weighting: bool = True,
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """Vectorised Elo update (e.g. over bootstrap replicates): (R_A', R_B', E_A, K_eff).

    Where n = S_A + S_B is 0 (every judgement of the match failed) ratings stay unchanged
    and K_eff is reported as 0.
    """
    ra, rb = np.asarray(r_a, float), np.asarray(r_b, float)
    sa, sb = np.asarray(s_a, float), np.asarray(s_b, float)
    e_a = 1.0 / (1.0 + 10.0 ** ((rb - ra) / ELO_SCALE))
    n = sa + sb
    played = n > 0
    frac_a = np.where(played, sa / np.where(played, n, 1.0), e_a)
    k_eff = upset_k(k, ra, rb, frac_a) if upset_weighting else np.full(frac_a.shape, float(k))
    k_eff = np.where(played, k_eff, 0.0)
    delta = k_eff * (frac_a - e_a)
    return ra + delta, rb - delta, e_a, k_eff


@dataclass(frozen=True)
class EloUpdate:
    r_a: float
    r_b: float
    expected_a: float
    k: float


def update(
    r_a: float, r_b: float, s_a: float, s_b: float, k: float = 32.0, upset_weighting: bool = True
) -> EloUpdate:
    """Elo after one match; ``s_a``/``s_b`` are the summed per-question scores."""
    ra, rb, e_a, k_eff = update_arrays(r_a, r_b, s_a, s_b, k, upset_weighting)
    return EloUpdate(float(ra), float(rb), float(e_a), float(k_eff))
