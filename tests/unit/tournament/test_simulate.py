"""Simulation mode: the ranking machinery recovers known strengths from a stochastic oracle."""

from ragcourt.tournament.simulate import Oracle, SimConfig, format_table, simulate, summarise, sweep


def test_well_separated_field_is_ranked_nearly_perfectly_by_round_robin() -> None:
    r = simulate(SimConfig(n_systems=8, spacing=150.0, judge_sd=0.3, seed=2))
    assert (r["swiss_matches"], r["rr_matches"], r["rounds"]) == (16, 28, 4)
    assert r["swiss_judge_calls"] == 2 * 50 * 16
    assert r["tau_rr"] >= 0.85
    assert r["tau_swiss_bt"] >= 0.7
    assert r["tau_swiss"] > 0.4


def test_no_signal_gives_no_ranking() -> None:
    rows = sweep([8], seeds=6, strength_sd=1e-6)  # an order exists but is invisible
    s = summarise(rows)[0]
    assert abs(s["tau_rr"]) < 0.4 and abs(s["tau_swiss"]) < 0.4


def test_oracle_draws_each_judgement_once() -> None:
    o = Oracle(SimConfig(n_systems=4, seed=0))
    first = o.play([("S00", "S01")])[0]
    again = o.play([("S00", "S01")])[0]
    flipped = o.play([("S01", "S00")])[0]
    assert first == again
    assert (flipped.s_a, flipped.s_b) == (first.s_b, first.s_a)


def test_summary_table_prints_every_n() -> None:
    table = format_table(summarise(sweep([4, 6], seeds=2, n_questions=10)))
    assert len(table.splitlines()) == 3 and "tau Swiss Elo" in table
