"""The judge summary model: the writer's JSON from small real tables (exact keys, values and
JSON types), and the summary.json of the demo run (written before the model existed)
survives the model unchanged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from ragcourt.core import catalog
from ragcourt.judging.answers_stage import correctness_frame, verdicts_frame
from ragcourt.judging.dafe import resolve
from ragcourt.judging.summaries import JudgeSummary, ThetaFitReport, ThetaNotFitted
from ragcourt.judging.summary import judge_summary
from ragcourt.judging.vocabulary import AnswerVerdict, CorrectnessGrade
from ragcourt.orchestration.params import Params, load_params

ROOT = Path(__file__).resolve().parents[3]


def _text(obj: Any) -> str:
    """JSON the way ``write_json`` writes it (so 1 and 1.0 differ)."""
    return json.dumps(obj, indent=2, sort_keys=True, default=str)


def _corr(label: str, target: str, n: int, rho: float | None, se: float | None) -> dict[str, Any]:
    return {"label": label, "target": target, "n": n, "spearman": rho, "spearman_se": se}


def _tables() -> dict[str, pl.DataFrame]:
    inputs = pl.DataFrame(
        {
            "system": ["A", "A", "B"],
            "question_id": ["q1", "q2", "q1"],
            "abstained": [False, True, None],
            "input_error": [None, None, "answer failed: timeout"],
        }
    )
    agree = resolve(AnswerVerdict("tf1", True), AnswerVerdict("em", True), None)
    split = resolve(
        AnswerVerdict("tf1", True),
        AnswerVerdict("em", False),
        AnswerVerdict("llm", False, form="probability"),
    )
    grades = {
        0: CorrectnessGrade(1.0, "right", form="generated"),
        1: CorrectnessGrade(None, "?", "no number", form="generated"),
    }
    return {
        "verdicts": verdicts_frame(inputs, {0: agree, 1: split}),
        "correctness": correctness_frame(inputs, grades),
        "relevance": pl.DataFrame(
            {
                "question_id": ["q1", "q1", "q2"],
                "chunk_id": ["c1", "c2", "c3"],
                "n_systems": pl.Series([2, 1, 1], dtype=pl.Int32),
                "relevance": pl.Series([2, None, 0], dtype=pl.Int8),
                "form": ["probability", "probability", "generated"],
            }
        ),
        "udcg": pl.DataFrame({"udcg": [0.75, None, 0.25]}),
        "system_summary": pl.DataFrame(
            {"system": ["A", "B"], "accuracy": [0.5, None]},
            schema_overrides={"accuracy": pl.Float64},
        ),
        "correlation": pl.DataFrame(
            [
                _corr("UDCG (k<=5)", "correctness", 3, 0.5, 0.9),
                _corr("UDCG (k<=5)", "outcome", 3, 0.1, 0.8),
                _corr("MRR@5, span rule", "correctness", 2, None, None),
            ],
            schema_overrides={"spearman": pl.Float64, "spearman_se": pl.Float64},
        ),
    }


def _summary(params: Params, theta: ThetaFitReport | ThetaNotFitted) -> dict[str, Any]:
    t = _tables()
    summary = judge_summary(
        params,
        t["verdicts"],
        t["correctness"],
        t["relevance"],
        t["udcg"],
        t["system_summary"],
        t["correlation"],
        theta,
        (False, False, True),
    )
    return summary.model_dump(mode="json")


def test_judge_summary_json_from_small_tables() -> None:
    params = load_params(ROOT / "params.yaml")
    jp = params.judge
    got = _summary(params, ThetaNotFitted(fitted=False))
    expected = {
        "dafe": {
            "items": 2,
            "final_verdicts": 2,
            "error_rows": 0,
            "degraded": 0,
            "both_primaries_ok": 2,
            "disagreements": 1,
            "disagreement_rate": 0.5,
            "arbitrator_calls": 1,
            "judge_calls": 5,
            "judge_calls_always_three": 6,
            "judge_calls_saved": 1,
            "judge_calls_saved_fraction": 1 / 6,
            "judge_calls_per_verdict": 2.5,
            "per_judge": {
                "tf1": {"n": 2, "agreement_with_final": 0.5},
                "em": {"n": 2, "agreement_with_final": 1.0},
                "llm": {"n": 1, "agreement_with_final": 1.0},
            },
            "llm_judge_calls": 1,
            "llm_judge_calls_always_three": 2,
            "primaries": jp.primaries,
            "arbitrator": jp.arbitrator,
            "answer_rows": 3,
            "input_error_rows": 1,
            "llm_verdict_forms": {"probability": 1},
        },
        "accuracy_per_system": {"A": 0.5, "B": None},
        "correctness": {
            "mode": "trained",
            "model": "trained judge (no LLM)",
            "prompt_version": jp.prompt_version,
            "forms": {"generated": 2, "none": 1},
            "rows": 3,
            "scored": 1,
            "errors": 2,
            "mean": 1.0,
        },
        "relevance": {
            "model": "trained judge (no LLM)",
            "unique_passages": 3,
            "passage_rows_across_systems": 4,
            "judgments_saved_by_dedup": 1,
            "forms": {"generated": 1, "probability": 2},
            "errors": 1,
            "grades": {"0": 1, "2": 1, "error": 1},
        },
        "udcg": {
            "model": "trained judge (no LLM)",
            "gamma": jp.udcg.gamma,
            "k": 5,
            "relevance_threshold": 1,
            "rows": 3,
            "scored": 2,
            "errors": 1,
            "mean": 0.5,
            "theta": {"fitted": False},
        },
        "spearman_with_correctness": {
            "UDCG (k<=5)": {"spearman": 0.5, "se": 0.9, "n": 3},
            "MRR@5, span rule": {"spearman": None, "se": None, "n": 2},
        },
    }
    assert got == expected
    assert _text(got) == _text(expected)  # and the same JSON types (1 is not 1.0)
    assert JudgeSummary.model_validate(got).model_dump(mode="json") == got


def test_udcg_theta_fit_report_keeps_all_its_keys() -> None:
    params = load_params(ROOT / "params.yaml")
    fit = ThetaFitReport(
        fitted=False, k=5, pairs=19, alpha=None, beta=None, reason="not enough data",
        target="correctness", scores="out-of-fold (GroupKFold by question)",
    )  # fmt: skip
    theta = _summary(params, fit)["udcg"]["theta"]
    assert theta == {
        "fitted": False,
        "k": 5,
        "pairs": 19,
        "alpha": None,
        "beta": None,
        "reason": "not enough data",
        "target": "correctness",
        "scores": "out-of-fold (GroupKFold by question)",
    }


def test_demo_judge_summary_survives_the_model_unchanged() -> None:
    path = ROOT / catalog.path("judge_summary")
    if not path.is_file():
        pytest.skip(f"{path} not present")
    text = path.read_text(encoding="utf-8")
    model = JudgeSummary.model_validate(json.loads(text))
    dumped, stored = model.model_dump(mode="json"), json.loads(text)
    for section, key in (
        ("dafe", "llm_verdict_forms"),
        ("correctness", "forms"),
        ("relevance", "forms"),
    ):
        if key not in stored[section]:  # a demo summary written before the forms
            assert dumped[section].pop(key) == {}
    assert _text(dumped) + "\n" == text


def test_judge_summary_rejects_unknown_and_missing_keys() -> None:
    got = _summary(load_params(ROOT / "params.yaml"), ThetaNotFitted(fitted=False))
    with pytest.raises(ValueError, match="extra"):
        JudgeSummary.model_validate(got | {"surprise": 1})
    del got["relevance"]["grades"]
    with pytest.raises(ValueError, match="grades"):
        JudgeSummary.model_validate(got)
