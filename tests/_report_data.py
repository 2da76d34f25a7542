"""Small synthetic pipeline artifacts (schema-valid) for report and artifact-publishing tests.

Values are hand-picked so each test can assert that a specific figure reaches the page; they
are test fixtures, not results. ``skip`` leaves named artifacts out to test degradation.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl

from ragcourt.core.control_kinds import NO_CONTROLS
from ragcourt.core.io import write_parquet
from ragcourt.core.schemas import TABLES
from ragcourt.judging.discrimination import NOT_SEPARATED, REVERSED, SEPARATED
from ragcourt.tournament.gaps import METHOD_NOTE, questions_to_resolve

SYSTEMS = ["dense-k5", "bm25-k5", "dense-k1"]
QUESTIONS = ["q1", "q2", "q3"]


def frame(table: str, rows: list[dict[str, Any]]) -> pl.DataFrame:
    """Rows of ``table`` with every declared column (absent keys -> null), schema dtypes."""
    schema = dict(TABLES[table])
    return pl.from_dicts(rows, schema=schema)  # type: ignore[arg-type]


REPO = Path(__file__).resolve().parents[1]
_DATA_KEYED = {"accuracy_per_system", "rejections", "per_judge"}  # keys are data: replaced


def _merged(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict) and k not in _DATA_KEYED:
            out[k] = _merged(out[k], v)
        else:
            out[k] = v
    return out


# the demo answers hand-written questions (a BYO summary): the generated-QA summary the
# report's QA section reads is a fixture, as the qagen stage writes it
FIXTURE_SUMMARIES = {"data/qa/summary.json": REPO / "tests/data/qa_summary_generated.json"}


def _summary(rel: str, over: dict[str, Any]) -> dict[str, Any]:
    """A complete summary as its stage writes it (the committed demo summary, or for QA a
    fixture, which the writers' pydantic models validate) with the fields a test controls
    overridden."""
    source = FIXTURE_SUMMARIES.get(rel, REPO / rel)
    return _merged(json.loads(source.read_text()), over)


def _json(path: Path, obj: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, indent=2))


def gap(
    better: str, worse: str, elo_gap: float, lo: float, hi: float, adjacent: bool
) -> dict[str, Any]:
    """One ``elo_gaps`` pair as the tournament writes it (3 questions per match)."""
    resolved = lo > 0 or hi < 0
    return {
        "better": better,
        "worse": worse,
        "adjacent": adjacent,
        "elo_gap": elo_gap,
        "elo_gap_lo": lo,
        "elo_gap_hi": hi,
        "resolved": resolved,
        "questions_to_resolve": None if resolved else questions_to_resolve(3, elo_gap, lo, hi),
    }


def elo_gaps(head: tuple[float, float] = (12.0, 111.0)) -> dict[str, Any]:
    """``elo_gaps`` of the fixture leaderboard: ``head`` is the interval of the best system's
    gap (61.5) to the runner-up; bm25-k5 vs dense-k1 (61.5 [-5, 128]) is not resolved."""
    a, b, c = SYSTEMS
    return {
        "systems": SYSTEMS,
        "n_questions": 3,
        "level": 0.95,
        "method_note": METHOD_NOTE,
        "pairs": [
            gap(a, b, 61.5, *head, adjacent=True),
            gap(a, c, 123.0, 70.0, 176.0, adjacent=False),
            gap(b, c, 61.5, -5.0, 128.0, adjacent=True),
        ],
    }


def discrimination(verdict: str) -> dict[str, Any]:
    """A tournament ``discrimination`` check on one control pair (oracle > random) with
    ``verdict`` ("separated", "reversed" or the not-separated text)."""
    counts = {
        "separated": int(verdict == SEPARATED),
        "reversed": int(verdict == REVERSED),
        "not_separated": int(verdict == NOT_SEPARATED),
        "not_checked": 0,
    }
    return {
        "status": "checked",
        "controls": {"oracle": "oracle", "random": "random"},
        "pairs": [
            {
                "better": "oracle",
                "worse": "random",
                "better_control": "oracle",
                "worse_control": "random",
                "questions": 3,
                "errors": 0,
                "win_rate": 0.5,
                "elo_gap": 4.0,
                "elo_gap_lo": -30.0 if verdict != SEPARATED else 1.0,
                "elo_gap_hi": 40.0,
                "verdict": verdict,
            }
        ],
        **counts,
        "resolvable_elo_gap": 50.0,
        "resolvable_note": "median half-width",
        "judge_calls_executed": 0,
    }


def write_artifacts(
    root: Path,
    skip: set[str] = frozenset(),  # type: ignore[assignment]
    tournament: dict[str, Any] | None = None,
) -> None:
    """Every artifact the report reads under ``root``, less ``skip``; ``tournament``
    overrides fields of the tournament summary (e.g. ``elo_gaps``, ``discrimination``)."""

    def put(name: str, rel: str, table: str, rows: list[dict[str, Any]]) -> None:
        if name not in skip:
            write_parquet(frame(table, rows), root / rel, table)

    put(
        "documents",
        "data/documents.parquet",
        "documents",
        [
            {
                "doc_id": "d1",
                "path": "a.txt",
                "title": "A",
                "format": "txt",
                "text": "x" * 50,
                "n_chars": 50,
            }
        ],
    )
    put(
        "qa",
        "data/qa/qa.parquet",
        "qa",
        [
            {
                "question_id": q,
                "question": f"What does passage {q} say about tariffs?",
                "reference_answers": [f"Answer {q}"],
                "doc_id": "d1",
                "char_start": 0,
                "char_end": 10,
                "context": "ctx",
            }
            for q in QUESTIONS
        ],
    )
    put(
        "qa_rejected",
        "data/qa/qa_rejected.parquet",
        "qa_rejected",
        [{"candidate_id": "c9", "failed_filter": "faithfulness", "reason": "low"}],
    )
    if "qa_summary" not in skip:
        _json(
            root / "data/qa/summary.json",
            _summary(
                "data/qa/summary.json",
                {
                    "requested": 3,
                    "accepted": 3,
                    "attempts": 7,
                    "acceptance_rate": 3 / 7,
                    "stop_reason": "n_items_reached",
                    "rejections": {"answerability": 2, "faithfulness": 1, "duplicate": 1},
                },
            ),
        )
    ret_rows = []
    for chunking, size in (("c128", 128), ("c256", 256), ("c512", 512)):
        for emb, retr in (("minilm", "dense"), ("mpnet", "dense"), (None, "bm25")):
            for metric in ("R", "RR", "nDCG", "P"):
                for k in (1, 5):
                    base = 0.4 + size / 2000 + (0.05 if emb == "mpnet" else 0.0)
                    ret_rows.append(
                        {
                            "chunking": chunking,
                            "chunk_size": size,
                            "chunk_overlap": size // 8,
                            "embedder": emb,
                            "retriever": retr,
                            "measure": f"{metric}@{k}",
                            "metric": metric,
                            "k": k,
                            "value": min(base * k / 5, 1.0),
                            "std": 0.1,
                            "n_queries": 3,
                        }
                    )
    put("retrieval_summary", "data/retrieval/summary.parquet", "retrieval_summary", ret_rows)
    put(
        "answers",
        "data/answers/answers.parquet",
        "answers",
        [
            {
                "system": s,
                "question_id": q,
                "answer": f"{s} says tariffs rose ({q})",
                "abstained": False,
                "latency_s": 0.5,
                "prompt_tokens": 100,
                "completion_tokens": 20,
            }
            for s in SYSTEMS
            for q in QUESTIONS
        ],
    )
    verdict_rows = []
    for i, (s, q) in enumerate((s, q) for s in SYSTEMS for q in QUESTIONS):
        arb = i == 1
        v1, v2 = (True, False) if arb else (i % 2 == 0, i % 2 == 0)
        verdict_rows.append(
            {
                "system": s,
                "question_id": q,
                "abstained": False,
                "primary1_judge": "token_f1",
                "primary1_verdict": v1,
                "primary1_score": 0.6,
                "primary1_justification": "token F1 0.60 >= 0.5",
                "primary2_judge": "ref_similarity",
                "primary2_verdict": v2,
                "primary2_score": 0.55,
                "primary2_justification": "cosine 0.55 < 0.7",
                "arbitrator_judge": "llm" if arb else None,
                "arbitrator_verdict": True if arb else None,
                "arbitrator_justification": "ARBITER-REASONING: the answer matches"
                if arb
                else None,
                "agree": not arb,
                "arbitrator_called": arb,
                "final_verdict": True if arb else v1,
                "resolution": "majority" if arb else "agreed",
            }
        )
    put("verdicts", "data/judge/verdicts.parquet", "verdicts", verdict_rows)
    put(
        "correctness",
        "data/judge/correctness.parquet",
        "correctness",
        [{"system": s, "question_id": q, "correctness": 0.7} for s in SYSTEMS for q in QUESTIONS],
    )
    put(
        "system_summary",
        "data/judge/system_summary.parquet",
        "system_summary",
        [
            {"system": s, "n_questions": 3, "accuracy": acc, "correctness_mean": acc - 0.1}
            for s, acc in zip(SYSTEMS, (0.9, 0.6, 0.3), strict=True)
        ],
    )
    if "judge_summary" not in skip:
        _json(
            root / "data/judge/summary.json",
            _summary(
                "data/judge/summary.json",
                {
                    "dafe": {
                        "items": 9,
                        "final_verdicts": 9,
                        "error_rows": 0,
                        "disagreements": 1,
                        "disagreement_rate": 1 / 9,
                        "arbitrator_calls": 1,
                        "judge_calls": 19,
                        "judge_calls_always_three": 27,
                        "judge_calls_saved": 8,
                        "judge_calls_saved_fraction": 8 / 27,
                        "llm_judge_calls": 1,
                        "llm_judge_calls_always_three": 9,
                        "per_judge": {
                            "token_f1": {"n": 9, "agreement_with_final": 1.0},
                            "ref_similarity": {"n": 9, "agreement_with_final": 0.889},
                            "llm": {"n": 1, "agreement_with_final": 1.0},
                        },
                        "primaries": ["token_f1", "ref_similarity"],
                        "arbitrator": "llm",
                    },
                    "accuracy_per_system": {"dense-k5": 0.9, "bm25-k5": 0.6, "dense-k1": 0.3},
                    # the fixture's systems are real: no DAFE check of controls
                    "discrimination": {
                        "status": NO_CONTROLS,
                        "controls": {},
                        "pairs": [],
                        "separated": 0,
                        "reversed": 0,
                        "not_separated": 0,
                        "not_checked": 0,
                    },
                },
            ),
        )
    put(
        "metric_correlation",
        "data/judge/metric_correlation.parquet",
        "metric_correlation",
        [
            {
                "metric": m,
                "label": lbl,
                "target": "correctness",
                "n": 9,
                "spearman": rho,
                "spearman_se": 0.4,
                "kendall_tau_b": rho * 0.8,
                "kendall_se": 0.3,
            }
            for m, lbl, rho in (
                ("udcg", "UDCG (γ=1/3)", 0.61),
                ("ndcg_at_k", "nDCG@5, span rule", 0.35),
                ("recall_at_k", "Recall@5, span rule", 0.2),
            )
        ],
    )
    put(
        "pairwise",
        "data/tournament/pairwise.parquet",
        "pairwise",
        [
            {
                "system_a": "bm25-k5",
                "system_b": "dense-k5",
                "question_id": "q1",
                "judge": "llm",
                "p_ab_a": 0.2,
                "p_ab_b": 0.7,
                "p_ab_tie": 0.1,
                "p_ba_a": 0.25,
                "p_ba_b": 0.65,
                "p_ba_tie": 0.1,
                "p_a": 0.225,
                "p_b": 0.675,
                "p_tie": 0.1,
                "margin": 0.45,
                "scheme": "hard",
                "score_a": 0.0,
                "score_b": 1.0,
                "rationale_ab": "PAIRWISE-REASONING: B cites the passage",
                "rationale_ba": "B is right",
                "in_swiss": True,
                "in_round_robin": True,
            }
        ],
    )
    put(
        "leaderboard",
        "data/tournament/leaderboard.parquet",
        "leaderboard",
        [
            {
                "rank": r,
                "system": s,
                "elo": elo,
                "elo_lo": elo - 30,
                "elo_hi": elo + 30,
                "bt": elo + 5,
                "bt_lo": elo - 40,
                "bt_hi": elo + 50,
                "wins": w,
                "ties": 0,
                "losses": 2 - w,
                "matches": 2,
                "elo_rr": elo + 1,
            }
            for r, s, elo, w in (
                (1, "dense-k5", 1561.5, 2),
                (2, "bm25-k5", 1500.0, 1),
                (3, "dense-k1", 1438.5, 0),
            )
        ],
    )
    if "tournament_summary" not in skip:
        _json(
            root / "data/tournament/summary.json",
            _summary(
                "data/tournament/summary.json",
                {
                    "judge": "correctness_margin",
                    "outcome": "ranked",
                    "best_system": "dense-k5",
                    "n_systems": 3,
                    "n_questions": 3,
                    "judge_call_unit": "one presentation order of one question of one pair",
                    "swiss": {
                        "rounds": 3,
                        "matches": 3,
                        "judge_calls": 18,
                        "error_judgements": 0,
                        "ranking": SYSTEMS,
                    },
                    "round_robin": {
                        "enabled": True,
                        "matches": 3,
                        "judge_calls": 18,
                        "error_judgements": 0,
                        "ranking": SYSTEMS,
                    },
                    "judge_calls_executed": 18,
                    "swiss_saving": 0.0,
                    "kendall_swiss_vs_rr": {"tau_b": 1.0, "p_value": 0.33},
                    "kendall_swiss_vs_rr_elo": {"tau_b": 1.0, "p_value": 0.33},
                    "bootstrap": {"replicates": 200},
                    "elo_gaps": elo_gaps(),
                    "discrimination": None,  # the fixture's systems are real (no controls)
                    **(tournament or {}),
                },
            ),
        )
    if "metrics" not in skip:
        _json(
            root / "data/metrics/llm_answer.json",
            {
                "stage": "answer",
                "wall_time_s": 12.0,
                "total": {"requests": 9, "cache_hits": 4, "model_calls": 5},
                "models": {
                    "local/smollm2-135m": {
                        "requests": 9,
                        "cache_hits": 4,
                        "model_calls": 5,
                        "errors": 0,
                        "prompt_tokens": 900,
                        "completion_tokens": 180,
                        "model_time_s": 11.0,
                        "cost_usd": 0.0,
                    }
                },
            },
        )
    if "calibration_summary" not in skip:  # as the calibrate stage writes it without labels
        from ragcourt.calibration.params import CalibrationParams
        from ragcourt.calibration.stage import no_labels_summary

        _json(
            root / "data/calibration/summary.json",
            no_labels_summary(CalibrationParams(), Path("data/labels")).model_dump(mode="json"),
        )
