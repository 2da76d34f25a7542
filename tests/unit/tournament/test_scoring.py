"""DICE per-question scoring: margin rule, soft formula, order combination."""

import numpy as np
import pytest

from ragcourt.tournament.scoring import Probs, combine_orders, ordered_logit, score, score_arrays


def test_soft_score_worked_example() -> None:
    # p = (A 0.40, B 0.35, Tie 0.25): margin 0.05 < 0.1 -> soft.
    # s_A = 0.40 + 0.25 * 0.40 / 0.75 = 0.5333..., s_B = 0.35 + 0.25 * 0.35 / 0.75 = 0.4666...
    qs = score(Probs(0.40, 0.35, 0.25), margin=0.1)
    assert qs.scheme == "soft"
    assert qs.margin == pytest.approx(0.05)
    assert qs.s_a == pytest.approx(0.40 + 0.25 * 0.40 / 0.75)
    assert qs.s_b == pytest.approx(0.35 + 0.25 * 0.35 / 0.75)
    assert qs.s_a + qs.s_b == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("probs", "expected"),
    [
        (Probs(0.83, 0.00, 0.17), (1.0, 0.0)),  # DICE appendix example: margin 0.66
        (Probs(0.10, 0.70, 0.20), (0.0, 1.0)),
        (Probs(0.20, 0.25, 0.55), (0.5, 0.5)),  # tie wins by 0.30: hard tie
    ],
)
def test_hard_scores(probs: Probs, expected: tuple[float, float]) -> None:
    qs = score(probs)
    assert qs.scheme == "hard"
    assert (qs.s_a, qs.s_b) == expected


def test_margin_boundary_is_inclusive() -> None:
    assert score(Probs(0.50, 0.40, 0.10), margin=0.1).scheme == "hard"  # ΔP = 0.1 exactly
    assert score(Probs(0.50, 0.41, 0.09), margin=0.1).scheme == "soft"


def test_soft_branch_with_zero_a_and_b_splits_evenly() -> None:
    s_a, s_b, hard, _ = score_arrays(0.0, 0.0, 1.0, margin=2.0)  # forced soft, p_A + p_B = 0
    assert (bool(hard), float(s_a), float(s_b)) == (False, 0.5, 0.5)


def test_combine_orders_cancels_position_bias() -> None:
    # A judge that gives the first slot +0.2 whatever it shows: order AB favours a, BA favours b.
    ab, ba = Probs(0.6, 0.2, 0.2), Probs(0.6, 0.2, 0.2)
    comb = combine_orders(ab, ba)
    assert (comb.a, comb.b, comb.tie) == pytest.approx((0.4, 0.4, 0.2))
    # swapped order maps label A back to system b
    comb2 = combine_orders(Probs(0.7, 0.1, 0.2), Probs(0.3, 0.5, 0.2))
    assert (comb2.a, comb2.b) == pytest.approx((0.6, 0.2))


def test_from_labels_renormalises_and_rejects_empty() -> None:
    p = Probs.from_labels({"A": 2.0, "B": 1.0, "C": 1.0})
    assert (p.a, p.b, p.tie) == pytest.approx((0.5, 0.25, 0.25))
    with pytest.raises(ValueError):
        Probs.from_labels({"A": 0.0, "B": 0.0, "C": 0.0})


def _spec_score(p_a: float, p_b: float, p_tie: float, m: float = 0.1) -> tuple[float, bool, float]:
    """spec §6 written out independently of ragcourt.tournament: (s_A, hard?, ΔP)."""
    first, second, _ = sorted((p_a, p_b, p_tie), reverse=True)
    delta = first - second
    if delta >= m:
        best = max((p_a, "A"), (p_b, "B"), (p_tie, "T"))[1]
        return {"A": 1.0, "B": 0.0, "T": 0.5}[best], True, delta
    return p_a + p_tie * p_a / (p_a + p_b), False, delta


def test_score_arrays_matches_the_spec_formula_written_out() -> None:
    rng = np.random.default_rng(0)
    p = rng.dirichlet([1, 1, 1], size=200)
    s_a, s_b, hard, delta = score_arrays(p[:, 0], p[:, 1], p[:, 2])
    for i in range(200):
        ref_s_a, ref_hard, ref_delta = _spec_score(*p[i])
        assert bool(hard[i]) is ref_hard
        assert (float(s_a[i]), float(delta[i])) == pytest.approx((ref_s_a, ref_delta))
    assert np.allclose(s_a + s_b, 1.0)
    assert 0 < hard.sum() < 200  # both branches exercised


def test_score_arrays_hand_worked_values() -> None:
    # rows: soft (ΔP 0.05), hard A (ΔP 0.66), hard tie (ΔP 0.30), soft with the tie on top (ΔP 0.06)
    s_a, s_b, hard, delta = score_arrays(
        [0.40, 0.83, 0.20, 0.30], [0.35, 0.00, 0.25, 0.32], [0.25, 0.17, 0.55, 0.38]
    )
    # 0.40 + 0.25*0.40/0.75 = 8/15; 0.30 + 0.38*0.30/0.62 = 0.30 + 0.114/0.62 = 0.483870...
    assert s_a == pytest.approx([8 / 15, 1.0, 0.5, 0.30 + 0.114 / 0.62])
    assert s_b == pytest.approx([7 / 15, 0.0, 0.5, 0.32 + 0.38 * 0.32 / 0.62])
    assert hard.tolist() == [False, True, True, False]
    assert delta == pytest.approx([0.05, 0.66, 0.30, 0.06])


def test_ordered_logit_is_a_distribution_and_symmetric() -> None:
    d = np.linspace(-2, 2, 41)
    p_a, p_b, p_t = ordered_logit(d, 0.3, 0.2)
    assert np.all(p_t >= 0) and np.allclose(p_a + p_b + p_t, 1.0)
    assert np.allclose(p_a, p_b[::-1])  # d -> -d swaps A and B
    assert np.all(np.diff(p_a) > 0)
