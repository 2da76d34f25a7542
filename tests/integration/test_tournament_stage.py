"""The tournament stage end to end on synthetic answers + correctness (real parquet, real plot)."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from _tournament_data import answers_frame, correctness_frame, qa_frame

from ragcourt.core.errors import RagcourtError, StageFailed
from ragcourt.core.io import read_table
from ragcourt.orchestration.params import load_params
from ragcourt.tournament import stage as tournament

ROOT = Path(__file__).resolve().parents[2]
STRENGTHS = {"alpha": 0.95, "bravo": 0.75, "charlie": 0.55, "delta": 0.35, "echo": 0.15}
N_Q = 12


def _workspace(tmp: Path, strengths: dict[str, float]) -> Path:
    shutil.copy(ROOT / "params.yaml", tmp / "params.yaml")
    shutil.copytree(ROOT / "configs", tmp / "configs")
    (tmp / "data/answers").mkdir(parents=True)
    (tmp / "data/qa").mkdir(parents=True)
    (tmp / "data/judge").mkdir(parents=True)
    answers_frame(list(strengths), N_Q).write_parquet(tmp / "data/answers/answers.parquet")
    qa_frame(N_Q).write_parquet(tmp / "data/qa/qa.parquet")
    corr = correctness_frame(strengths, N_Q, seed=1)
    # one failed correctness judgement: every pair with echo on q03 becomes an error row
    corr = corr.with_columns(
        pl.when((pl.col("system") == "echo") & (pl.col("question_id") == "q03"))
        .then(pl.lit("timeout"))
        .otherwise(pl.col("error"))
        .alias("error")
    )
    corr.write_parquet(tmp / "data/judge/correctness.parquet")
    return tmp


def test_stage_writes_leaderboard_plot_and_summary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(_workspace(tmp_path, STRENGTHS))
    tournament.run(load_params("params.yaml"))
    out = tmp_path / "data/tournament"
    board = read_table(out / "leaderboard.parquet", "leaderboard")
    pairwise = read_table(out / "pairwise.parquet", "pairwise")
    matches = read_table(out / "matches.parquet", "matches")
    summary = json.loads((out / "summary.json").read_text())
    assert (out / "leaderboard.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    llm_metrics = json.loads((tmp_path / "data/metrics/llm_tournament.json").read_text())
    assert llm_metrics  # written even though the correctness_margin judge makes no model call

    n = len(STRENGTHS)
    assert board["rank"].to_list() == list(range(1, n + 1))
    assert board["system"][0] == "alpha" and board["system"][-1] == "echo"
    assert board.sort("bt", descending=True)["system"].to_list() == list(STRENGTHS)
    assert (board["elo_lo"] <= board["elo"]).all() and (board["elo"] <= board["elo_hi"]).all()
    assert (board["bt_lo"] <= board["bt"]).all() and (board["bt"] <= board["bt_hi"]).all()
    assert board["matches"].to_list() == (board["wins"] + board["ties"] + board["losses"]).to_list()

    # every round-robin pair judged once per question; judge errors are rows, not ties
    assert pairwise.height == n * (n - 1) // 2 * N_Q
    errors = pairwise.filter(pl.col("error").is_not_null())
    assert errors.height == n - 1 and errors["score_a"].null_count() == n - 1
    assert set(pairwise["scheme"].drop_nulls()) <= {"hard", "soft"}
    assert summary["error_rows"] == n - 1

    # Swiss with the round-robin on: every repeat-free round, 5 for N = 5 (odd: one bye each),
    # 2 matches + 1 bye per round, so it plays every pair and the round-robin adds none
    swiss_m = matches.filter(pl.col("tournament") == "swiss")
    assert summary["swiss"]["rounds"] == 5 and summary["swiss"]["byes"] == 5
    assert swiss_m.filter(pl.col("system_b").is_null()).height == 5
    assert summary["swiss"]["matches"] == 10 and summary["round_robin"]["matches"] == 10
    assert summary["swiss"]["judge_calls"] == 2 * N_Q * 10
    assert summary["round_robin"]["judge_calls"] == 2 * N_Q * 10
    assert summary["round_robin"]["judge_calls_computed"] == 2 * N_Q * 10
    assert summary["judge_calls_executed"] == 2 * N_Q * 10  # Swiss pairs reused by round-robin
    assert summary["swiss"]["judge_calls_executed"] == 2 * N_Q * 10
    assert summary["round_robin"]["judge_calls_executed"] == 0  # no pair left to judge
    assert summary["margin_threshold"] == load_params("params.yaml").tournament.margin
    assert summary["swiss"]["failed_matches"] == 0 and board["failed_matches"].sum() == 0
    assert summary["kendall_swiss_vs_rr"]["tau_b"] > 0.5
    assert pairwise.filter("in_swiss")["in_round_robin"].all()


def test_round_robin_off_reports_no_measured_round_robin_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(_workspace(tmp_path, STRENGTHS))
    params = load_params("params.yaml")
    params.tournament.round_robin = False
    tournament.run(params)
    summary = json.loads((tmp_path / "data/tournament/summary.json").read_text())
    rr = summary["round_robin"]
    assert rr["enabled"] is False
    for key in ("matches", "judge_calls", "judge_calls_executed", "error_judgements", "ranking"):
        assert rr[key] is None, key
    assert (rr["matches_computed"], rr["judge_calls_computed"]) == (10, 2 * N_Q * 10)
    assert summary["judge_calls_executed"] == summary["swiss"]["judge_calls"] == 2 * N_Q * 8


def test_matches_where_every_judgement_failed_are_counted_as_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = _workspace(tmp_path, STRENGTHS)
    corr = pl.read_parquet(ws / "data/judge/correctness.parquet")
    corr = corr.with_columns(  # every judgement involving echo fails
        pl.when(pl.col("system") == "echo").then(pl.lit("timeout")).otherwise(pl.col("error"))
        .alias("error")
    )  # fmt: skip
    corr.write_parquet(ws / "data/judge/correctness.parquet")
    monkeypatch.chdir(ws)
    # every judgement of one system failed: loud failure, after the outputs are written
    with pytest.raises(StageFailed, match="pairwise: every row failed for 'echo'"):
        tournament.run(load_params("params.yaml"))
    out = tmp_path / "data/tournament"
    board = read_table(out / "leaderboard.parquet", "leaderboard")
    matches = read_table(out / "matches.parquet", "matches")
    summary = json.loads((out / "summary.json").read_text())
    swiss_echo = matches.filter(
        (pl.col("tournament") == "swiss")
        & pl.col("system_b").is_not_null()
        & ((pl.col("system_a") == "echo") | (pl.col("system_b") == "echo"))
    )
    assert swiss_echo.height > 0 and (swiss_echo["n_questions"] == 0).all()
    echo = board.filter(pl.col("system") == "echo").row(0, named=True)
    assert echo["failed_matches"] == swiss_echo.height and echo["matches"] == 0
    assert summary["swiss"]["failed_matches"] == swiss_echo.height
    assert summary["round_robin"]["failed_matches"] == len(STRENGTHS) - 1
    assert echo["bt"] is None  # no valid judgement: unrated, and left out of Kendall τ-b
    assert summary["kendall_swiss_vs_rr"]["tau_b"] is not None


def test_single_system_mode_against_reference_tiers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(_workspace(tmp_path, STRENGTHS))
    tournament.run(load_params("params.yaml"))
    ref = tmp_path / "reference_leaderboard.parquet"
    shutil.copy(tmp_path / "data/tournament/leaderboard.parquet", ref)
    # a new system joins the answers and correctness tables
    _workspace_newcomer(tmp_path)
    tournament.run(load_params("params.yaml"), single="foxtrot", reference_leaderboard=ref)
    table = pl.read_parquet(tmp_path / "data/tournament/single/foxtrot.parquet")
    summary = json.loads((tmp_path / "data/tournament/single/foxtrot.json").read_text())
    assert table["tier"].to_list() == ["high", "mid", "low"]
    board = pl.read_parquet(ref)
    assert table["reference_system"].to_list() == [
        board["system"][0],
        board["system"][2],
        board["system"][4],
    ]
    assert (table["wins"] + table["ties"] + table["losses"]).to_list() == table[
        "n_questions"
    ].to_list()
    assert table["score"][2] > table["score"][0]  # beats the low tier more than the high tier
    low, high = table["reference_elo"][2], table["reference_elo"][0]
    assert low - 800 <= summary["elo"] <= high + 800


def _workspace_newcomer(tmp: Path) -> None:
    answers = pl.concat(
        [read_table(tmp / "data/answers/answers.parquet"), answers_frame(["foxtrot"], N_Q)]
    )
    answers.write_parquet(tmp / "data/answers/answers.parquet")
    corr = pl.concat(
        [
            pl.read_parquet(tmp / "data/judge/correctness.parquet"),
            correctness_frame({"foxtrot": 0.6}, N_Q, seed=9),
        ]
    )
    corr.write_parquet(tmp / "data/judge/correctness.parquet")


def test_cli_bad_input_is_one_line_error(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, {"alpha": 0.9})
    proc = subprocess.run(
        [sys.executable, "-m", "stages", "tournament", "--params", "params.yaml"],
        cwd=ws,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1].startswith("ragcourt: error: ")
    assert "at least 2 systems" in proc.stderr


def test_missing_correctness_table_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(_workspace(tmp_path, STRENGTHS))
    (tmp_path / "data/judge/correctness.parquet").unlink()
    with pytest.raises(RagcourtError, match=r"correctness\.parquet: input artifact not found"):
        tournament.run(load_params("params.yaml"))


def _all_judgements_failed(tmp: Path) -> Path:
    ws = _workspace(tmp, STRENGTHS)
    corr = pl.read_parquet(ws / "data/judge/correctness.parquet")
    corr.with_columns(pl.lit("401 unauthorised").alias("error")).write_parquet(
        ws / "data/judge/correctness.parquet"
    )
    return ws


def test_no_valid_judgement_names_no_winner_and_exits_3(tmp_path: Path) -> None:
    """Every judgement failed: the stage (run as DVC runs it) writes its outputs with error
    rows, names no best system, leaves the leaderboard unranked, and exits 3 in one line."""
    ws = _all_judgements_failed(tmp_path)
    old_summary = ws / "data/tournament/summary.json"
    proc = subprocess.run(
        [sys.executable, "-m", "stages", "tournament"],
        cwd=ws, capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert proc.returncode == 3, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("ragcourt: stage failed: tournament: pairwise: ")
    assert "rows failed" in last and "Traceback" not in proc.stderr
    summary = json.loads(old_summary.read_text())
    assert summary["outcome"] == "no valid judgements" and summary["best_system"] is None
    board = read_table(ws / "data/tournament/leaderboard.parquet", "leaderboard")
    assert board["rank"].null_count() == board.height  # no order, so no ranks
    assert (board["elo"] == load_params(ws / "params.yaml").tournament.initial_elo).all()


def test_no_valid_judgement_is_no_winner_even_when_failures_are_accepted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(_all_judgements_failed(tmp_path))
    params = load_params("params.yaml")
    params.failure.max_error_rate = 1.0
    params.failure.fail_on_system = False
    tournament.run(params)  # accepted by policy, but still no winner
    summary = json.loads((tmp_path / "data/tournament/summary.json").read_text())
    assert (summary["outcome"], summary["best_system"]) == ("no valid judgements", None)
