"""The tables the tournament and race stages write (:data:`ragcourt.core.schemas.TABLES`)."""

import polars as pl

from ragcourt.core.schemas import Columns

TABLES: dict[str, Columns] = {
    # DICE tournament (ragcourt.tournament, stage tournament). Orders: "ab" = system_a shown
    # as A, "ba" = system_b shown as A (so p_ba_a is the probability given to system_b's slot).
    "pairwise": {
        "system_a": pl.String,  # canonical orientation: system_a < system_b
        "system_b": pl.String,
        "question_id": pl.String,
        "judge": pl.String,
        "p_ab_a": pl.Float64,
        "p_ab_b": pl.Float64,
        "p_ab_tie": pl.Float64,
        "p_ba_a": pl.Float64,
        "p_ba_b": pl.Float64,
        "p_ba_tie": pl.Float64,
        "p_a": pl.Float64,  # combined over both orders, for system_a / system_b / tie
        "p_b": pl.Float64,
        "p_tie": pl.Float64,
        "margin": pl.Float64,  # ΔP = P_max - P_second of the combined probabilities (the
        # hard/soft threshold it is compared with is summary.json margin_threshold)
        "scheme": pl.String,  # hard | soft (null on error)
        "score_a": pl.Float64,
        "score_b": pl.Float64,
        "rationale_ab": pl.String,
        "rationale_ba": pl.String,
        "error": pl.String,  # null, or why this judgement failed (excluded from scores)
        "in_swiss": pl.Boolean,
        "in_round_robin": pl.Boolean,
    },
    "matches": {
        "tournament": pl.String,  # swiss | round_robin
        "round": pl.Int64,
        "system_a": pl.String,
        "system_b": pl.String,  # null: a bye for system_a
        "n_questions": pl.Int64,  # valid judgements in the match
        "n_errors": pl.Int64,
        "score_a": pl.Float64,
        "score_b": pl.Float64,
        "elo_a_before": pl.Float64,
        "elo_b_before": pl.Float64,
        "expected_a": pl.Float64,
        "k": pl.Float64,  # effective (upset-weighted) K
        "elo_a_after": pl.Float64,
        "elo_b_after": pl.Float64,
    },
    "leaderboard": {
        "rank": pl.Int64,
        "system": pl.String,
        "elo": pl.Float64,  # Swiss Elo, bootstrap CI over questions
        "elo_lo": pl.Float64,
        "elo_hi": pl.Float64,
        "bt": pl.Float64,  # Bradley-Terry on all judged pairs, Elo scale
        "bt_lo": pl.Float64,
        "bt_hi": pl.Float64,
        "wins": pl.Int64,  # Swiss match outcomes
        "ties": pl.Int64,
        "losses": pl.Int64,
        "matches": pl.Int64,  # wins + ties + losses: Swiss matches with a valid judgement
        "failed_matches": pl.Int64,  # Swiss matches where every judgement failed (not scored)
        "elo_rr": pl.Float64,  # round-robin Elo (null when round_robin is off)
    },
}

# one round of the live race (stage race): the tournament's pairwise rows of that round's pairs
TABLES["race_pairwise"] = {
    **{k: v for k, v in TABLES["pairwise"].items() if not k.startswith("in_")},
    "race_round": pl.Int32,
}
