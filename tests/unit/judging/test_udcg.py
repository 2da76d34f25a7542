"""UDCG recomputed by hand on a small case with relevant and distracting passages."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from ragcourt.judging.udcg import (
    fit_udcg_theta,
    pairwise_transform,
    theta_features,
    udcg,
    udcg_per_question,
    utility_table,
)

# Question q1, four passages in rank order (relevance grade, P(NO-RESPONSE)):
#   c1: grade 2 (very relevant),      P = 0.1 -> R = +1, u = +0.9
#   c2: grade 0 (not relevant),       P = 0.7 -> R = -1, u = -0.3  (weak distractor)
#   c3: grade 1 (somewhat relevant),  P = 0.5 -> R = +1, u = +0.5  (threshold 1)
#   c4: grade 0 (not relevant),       P = 0.4 -> R = -1, u = -0.6  (strong distractor)
# Σu⁺ = 1.4, Σu⁻ = -0.9, k = 4, γ = 1/3:
#   x = 1.4/4 + (1/3)(-0.9)/4 = 0.35 - 0.075 = 0.275
#   UDCG = 1 / (1 + e^-0.275) = 1 / (1 + 0.7595721) = 0.5683200
# With relevance threshold 2, c3 turns into a distractor: u3 = -0.5, Σu⁺ = 0.9, Σu⁻ = -1.4:
#   x = 0.9/4 - 1.4/12 = 0.225 - 0.1166667 = 0.1083333 -> UDCG = 0.5270569
GRADES = {"c1": 2, "c2": 0, "c3": 1, "c4": 0}
P_NR = {"c1": 0.1, "c2": 0.7, "c3": 0.5, "c4": 0.4}
HAND_UDCG = 0.5683200
HAND_UDCG_THRESHOLD2 = 0.5270569


def test_udcg_formula_by_hand() -> None:
    assert udcg([0.9, -0.3, 0.5, -0.6]) == pytest.approx(HAND_UDCG, abs=1e-6)
    assert udcg([0.9, -0.3, -0.5, -0.6]) == pytest.approx(HAND_UDCG_THRESHOLD2, abs=1e-6)
    assert udcg([0.9, -0.3, 0.5, -0.6], gamma=0.0) == pytest.approx(1 / (1 + math.exp(-0.35)))
    with pytest.raises(ValueError):
        udcg([])


def _frames() -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    chunks = list(GRADES)
    relevance = pl.DataFrame(
        {
            "question_id": ["q1"] * 4,
            "chunk_id": chunks,
            "relevance": [GRADES[c] for c in chunks],
            "error": [None] * 4,
        },
        schema_overrides={"relevance": pl.Int8, "error": pl.String},
    )
    probs = pl.DataFrame(
        {
            "question_id": ["q1"] * 4,
            "chunk_id": chunks,
            "p_no_response": [P_NR[c] for c in chunks],
            "p_method": ["logits"] * 4,
            "p_error": [None] * 4,
        },
        schema_overrides={"p_error": pl.String},
    )
    # system A ranks c1..c4; system B has the same passages in reverse order plus only 2 of them
    passages = pl.DataFrame(
        {
            "system": ["A"] * 4 + ["B"] * 2,
            "question_id": ["q1"] * 6,
            "rank": [1, 2, 3, 4, 1, 2],
            "chunk_id": ["c1", "c2", "c3", "c4", "c4", "c2"],
        }
    )
    return relevance, probs, passages


def test_udcg_per_question_from_tables_by_hand() -> None:
    relevance, probs, passages = _frames()
    util = utility_table(relevance, probs, relevance_threshold=1)
    u = dict(zip(util["chunk_id"], util["utility"], strict=True))
    assert u == pytest.approx({"c1": 0.9, "c2": -0.3, "c3": 0.5, "c4": -0.6})
    out = udcg_per_question(passages, util).sort("system")
    a, b = out.row(0, named=True), out.row(1, named=True)
    assert a["udcg"] == pytest.approx(HAND_UDCG, abs=1e-6)
    assert a["chunk_ids"] == ["c1", "c2", "c3", "c4"] and a["n_passages"] == 4
    # B: only distractors c4 (-0.6), c2 (-0.3): x = (1/3)(-0.9)/2 = -0.15 -> σ = 0.4625702
    assert b["udcg"] == pytest.approx(1 / (1 + math.exp(0.15)), abs=1e-9)
    assert b["udcg"] == pytest.approx(0.4625702, abs=1e-6)
    assert a["error"] is None and b["error"] is None


def test_udcg_threshold_two_by_hand() -> None:
    relevance, probs, passages = _frames()
    util = utility_table(relevance, probs, relevance_threshold=2)
    out = udcg_per_question(passages.filter(pl.col("system") == "A"), util)
    assert out["udcg"][0] == pytest.approx(HAND_UDCG_THRESHOLD2, abs=1e-6)


def test_udcg_missing_input_is_an_error_row_not_a_guess() -> None:
    relevance, probs, passages = _frames()
    probs = probs.with_columns(
        pl.when(pl.col("chunk_id") == "c3")
        .then(None)
        .otherwise(pl.col("p_no_response"))
        .alias("p_no_response"),
        pl.when(pl.col("chunk_id") == "c3")
        .then(pl.lit("timeout"))
        .otherwise(None)
        .alias("p_error"),
    )
    relevance = relevance.with_columns(
        pl.when(pl.col("chunk_id") == "c4")
        .then(None)
        .otherwise(pl.col("relevance"))
        .alias("relevance"),
        pl.when(pl.col("chunk_id") == "c4").then(pl.lit("bad json")).otherwise(None).alias("error"),
    )
    util = utility_table(relevance, probs)
    assert util.filter(pl.col("chunk_id") == "c4")["utility"][0] is None
    assert util.filter(pl.col("chunk_id") == "c4")["error"][0] == "relevance: bad json"
    out = udcg_per_question(passages, util).sort("system")
    assert out["udcg"].to_list() == [None, None]
    assert out["error"][0] == "passage c3: P(NO-RESPONSE): timeout"
    assert out["error"][1] == "passage c4: relevance: bad json"


def test_theta_features_and_pairs() -> None:
    x = theta_features([[0.9, -0.3], [-0.5], None], k=2)
    assert x.tolist() == [[0.9, 0.0, 0.0, -0.3], [0.0, 0.0, -0.5, 0.0], [0, 0, 0, 0]]
    xp, yp = pairwise_transform(x, np.array([1.0, 0.0, 1.0]), np.array(["q", "q", "r"]))
    assert yp.tolist() == [1, -1]  # one pair (rows 0, 1), both orientations
    assert xp[0].tolist() == pytest.approx([0.9, 0.0, 0.5, -0.3])


def test_udcg_theta_learns_to_rank_and_reports_too_little_data() -> None:
    rng = np.random.default_rng(0)
    utilities, target, groups = [], [], []
    for q in range(30):
        for _ in range(4):
            us = rng.uniform(-1, 1, size=3).round(3).tolist()
            utilities.append(us)
            # end-to-end correctness driven by the first passage's utility
            target.append(1.0 if us[0] > 0.2 else 0.0)
            groups.append(f"q{q}")
    fit = fit_udcg_theta(utilities, target, groups, k=3, min_pairs=20)
    assert fit.scores is not None and fit.alpha is not None
    assert fit.alpha[0] > max(abs(a) for a in fit.alpha[1:])  # position 1 matters most
    pos = [s for s, t in zip(fit.scores, target, strict=True) if t == 1.0 and s is not None]
    neg = [s for s, t in zip(fit.scores, target, strict=True) if t == 0.0 and s is not None]
    assert np.mean(pos) > np.mean(neg)
    small = fit_udcg_theta(utilities[:8], target[:8], groups[:8], k=3, min_pairs=50)
    assert small.scores is None and "not enough data" in (small.reason or "")
