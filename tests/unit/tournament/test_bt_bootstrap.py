"""Bradley-Terry fit, score matrix replay and bootstrap intervals."""

import numpy as np
import polars as pl
import pytest

from ragcourt.tournament import bootstrap, bradley_terry
from ragcourt.tournament.elo import expected_score
from ragcourt.tournament.score_matrix import ScoreMatrix
from ragcourt.tournament.swiss import MatchScore, Pair, swiss


def test_bt_recovers_known_strengths() -> None:
    truth = np.array([200.0, 0.0, -100.0, -300.0]) + 1500
    ia, ib, wa, wb = [], [], [], []
    for i in range(4):
        for j in range(i + 1, 4):
            p = expected_score(truth[i], truth[j])
            ia.append(i)
            ib.append(j)
            wa.append(1000 * p)
            wb.append(1000 * (1 - p))
    est = bradley_terry.fit(ia, ib, wa, wb, 4, l2_c=1e6)
    assert est - est.mean() == pytest.approx(truth - truth.mean(), abs=1.0)


def test_bt_stays_finite_when_one_system_wins_everything() -> None:
    est = bradley_terry.fit([0, 0, 1], [1, 2, 2], [10, 10, 6], [0, 0, 4], 3)
    assert np.all(np.isfinite(est)) and est[0] > est[1] > est[2]
    assert est.mean() == pytest.approx(1500, abs=1e-6)


def test_bt_leaves_unjudged_systems_nan() -> None:
    est = bradley_terry.fit([0], [1], [3.0], [1.0], 3)
    assert np.isnan(est[2]) and est[0] > est[1]


def _pairwise(systems: list[str], n_q: int, seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    strength = {s: i for i, s in enumerate(systems)}
    rows = []
    for i, a in enumerate(systems):
        for b in systems[i + 1 :]:
            for q in range(n_q):
                s_a = float(rng.random() < expected_score(100 * strength[a], 100 * strength[b]))
                err = "judge failed" if q == 0 and a == systems[0] else None
                rows.append(
                    {
                        "system_a": a,
                        "system_b": b,
                        "question_id": f"q{q}",
                        "score_a": None if err else s_a,
                        "score_b": None if err else 1 - s_a,
                        "error": err,
                    }
                )
    return pl.DataFrame(rows)


def test_replay_of_played_schedule_reproduces_the_swiss_elo() -> None:
    systems = [f"s{i}" for i in range(6)]
    sm = ScoreMatrix.from_pairwise(_pairwise(systems, 12, 0), systems)

    def play(pairs: list[Pair]) -> list[MatchScore]:
        out = []
        for a, b in pairs:
            tot_a, tot_b = sm.totals()
            p, fwd = sm.pair_index(a, b)
            sa, sb = (tot_a[p], tot_b[p]) if fwd else (tot_b[p], tot_a[p])
            out.append(MatchScore(a, b, sa, sb, int(sm.valid[p].sum()), 0))
        return out

    res = swiss(systems, play, seed=3)
    replayed = sm.replay_elo(res.schedule)
    assert replayed == pytest.approx([res.ratings[s] for s in systems])


def test_error_rows_contribute_nothing() -> None:
    systems = ["a", "b"]
    df = pl.DataFrame(
        {
            "system_a": ["a", "a"],
            "system_b": ["b", "b"],
            "question_id": ["q1", "q2"],
            "score_a": [1.0, None],
            "score_b": [0.0, None],
            "error": [None, "boom"],
        }
    )
    sm = ScoreMatrix.from_pairwise(df, systems)
    tot_a, tot_b = sm.totals()
    assert (tot_a[0], tot_b[0], int(sm.valid.sum())) == (1.0, 0.0, 1)


def test_reversed_orientation_is_canonicalised() -> None:
    df = pl.DataFrame(
        {
            "system_a": ["b"],
            "system_b": ["a"],
            "question_id": ["q"],
            "score_a": [0.8],
            "score_b": [0.2],
            "error": [None],
        }
    )
    sm = ScoreMatrix.from_pairwise(df)
    assert sm.pairs == [("a", "b")]
    assert (sm.s_a[0, 0], sm.s_b[0, 0]) == (0.2, 0.8)


def test_bootstrap_intervals_bracket_point_estimates_and_are_seeded() -> None:
    systems = [f"s{i}" for i in range(5)]
    sm = ScoreMatrix.from_pairwise(_pairwise(systems, 30, 1), systems)
    schedule = [[("s0", "s1"), ("s2", "s3")], [("s0", "s2"), ("s1", "s3")]]
    ci = bootstrap.intervals(sm, bootstrap.elo_replicates(sm, schedule, 100, 7), seed=7)
    elo = sm.replay_elo(schedule)
    bt = sm.fit_bt()
    assert np.all(ci.elo_lo <= elo + 1e-9) and np.all(elo <= ci.elo_hi + 1e-9)
    assert np.all(ci.bt_lo <= bt) and np.all(bt <= ci.bt_hi)
    assert np.all(ci.bt_hi - ci.bt_lo > 0)
    again = bootstrap.intervals(sm, bootstrap.elo_replicates(sm, schedule, 100, 7), seed=7)
    assert np.array_equal(ci.elo_lo, again.elo_lo) and np.array_equal(ci.bt_hi, again.bt_hi)
    assert ci.elo_lo[4] == ci.elo_hi[4] == 1500  # s4 is not in the Swiss schedule
