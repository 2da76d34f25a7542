"""The tournament summary model: the summary ``run_tournament`` builds from a small real
tournament keeps the keys, values and JSON types of summary.json, and the summary.json of the
demo run (written before the model existed) survives the model unchanged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from ragcourt.core import catalog
from ragcourt.orchestration.params import load_params
from ragcourt.tournament.correctness_margin import CorrectnessMarginJudge
from ragcourt.tournament.runner import run_tournament
from ragcourt.tournament.summaries import TournamentSummary

ROOT = Path(__file__).resolve().parents[3]
# q00: a > b > c; q01: a > b and c's correctness failed (its pairs are error rows)
CORRECTNESS = pl.DataFrame(
    {
        "system": ["a", "b", "c", "a", "b", "c"],
        "question_id": ["q00", "q00", "q00", "q01", "q01", "q01"],
        "correctness": [1.0, 0.5, 0.0, 1.0, 0.5, None],
        "error": [None, None, None, None, None, "timeout"],
    }
)
TOP_KEYS = {
    "judge", "outcome", "best_system", "n_systems", "n_questions", "margin_threshold",
    "margin_note", "judge_call_unit",
    "judge_calls_note", "swiss", "round_robin", "judge_calls_executed", "swiss_saving",
    "pairwise_rows", "error_rows", "error_reasons", "schemes", "order_agreement",
    "kendall_swiss_vs_rr", "kendall_swiss_vs_rr_elo", "bootstrap", "bt_basis", "discrimination",
    "elo_gaps",
}  # fmt: skip


def _text(obj: Any) -> str:
    """JSON the way ``write_json`` writes it (so 1 and 1.0 differ)."""
    return json.dumps(obj, indent=2, sort_keys=True, default=str)


def _summary(round_robin: bool) -> dict[str, Any]:
    params = load_params(ROOT / "params.yaml")
    tp = params.tournament.model_copy(update={"bootstrap": 5, "round_robin": round_robin})
    out = run_tournament(CorrectnessMarginJudge(CORRECTNESS), ["a", "b", "c"], ["q00", "q01"], tp)
    return out.summary.model_dump(mode="json")


def test_tournament_summary_json_from_a_small_tournament() -> None:
    s = _summary(round_robin=True)
    assert set(s) == TOP_KEYS
    assert (s["judge"], s["n_systems"], s["n_questions"], s["margin_threshold"]) == (
        "correctness_margin", 3, 2, 0.1,
    )  # fmt: skip
    # 3 systems: one match and one bye per Swiss round, 3 rounds cover all 3 pairs
    assert s["swiss"] == {
        "rounds": 3,
        "stopped": "rounds",
        "matches": 3,
        "failed_matches": 0,
        "byes": 3,
        "judge_calls": 12,
        "judge_calls_executed": 12,
        "error_judgements": 2,
        "ranking": ["a", "b", "c"],
    }
    assert s["round_robin"] == {
        "enabled": True,
        "matches": 3,
        "failed_matches": 0,
        "judge_calls": 12,
        "judge_calls_executed": 0,  # every pair was already judged for Swiss
        "error_judgements": 2,
        "matches_computed": 3,
        "judge_calls_computed": 12,
        "ranking": ["a", "b", "c"],
    }
    assert (s["judge_calls_executed"], s["swiss_saving"]) == (12, 0.0)
    assert (s["pairwise_rows"], s["error_rows"], sum(s["error_reasons"].values())) == (6, 2, 2)
    assert sum(s["schemes"].values()) == 4 and s["order_agreement"] == 1.0
    assert s["kendall_swiss_vs_rr"]["tau_b"] == pytest.approx(1.0)
    assert set(s["kendall_swiss_vs_rr_elo"]) == {"tau_b", "p_value"}
    assert s["bootstrap"] == {"replicates": 5, "seed": 0, "level": 0.95, "unit": "questions"}
    assert s["bt_basis"] == "all judged pairs (round-robin)"
    gaps = s["elo_gaps"]
    assert gaps["systems"] == ["a", "b", "c"] and gaps["n_questions"] == 2
    assert [(p["better"], p["worse"], p["adjacent"]) for p in gaps["pairs"]] == [
        ("a", "b", True), ("a", "c", False), ("b", "c", True),
    ]  # fmt: skip
    assert all(p["elo_gap"] >= 0 for p in gaps["pairs"])
    assert _text(TournamentSummary.model_validate(s).model_dump(mode="json")) == _text(s)


def test_round_robin_off_leaves_its_measured_fields_null() -> None:
    s = _summary(round_robin=False)
    assert set(s) == TOP_KEYS
    rr = s["round_robin"]
    assert rr["enabled"] is False and rr["matches_computed"] == 3
    assert [rr[k] for k in ("matches", "judge_calls", "judge_calls_executed", "ranking")] == [
        None, None, None, None,
    ]  # fmt: skip
    assert s["kendall_swiss_vs_rr"] is None and s["kendall_swiss_vs_rr_elo"] is None
    assert s["bt_basis"] == "Swiss pairs only"
    assert _text(TournamentSummary.model_validate(s).model_dump(mode="json")) == _text(s)


def test_demo_tournament_summary_survives_the_model_unchanged() -> None:
    path = ROOT / catalog.path("tournament_summary")
    if not path.is_file():
        pytest.skip(f"{path} not present")
    text = path.read_text(encoding="utf-8")
    model = TournamentSummary.model_validate(json.loads(text))
    assert _text(model.model_dump(mode="json")) + "\n" == text
