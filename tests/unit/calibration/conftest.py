"""A synthetic judged world for the calibration tests (fixtures ``world``, ``world_factory``,
``frame``): systems with known answer quality, DAFE verdicts from a lenient judge,
correctness scores, passage grades, DICE judgements, and the true human label of every item
(to play the labeller)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from ragcourt.core.schemas import frame_schema


def table(name: str, rows: list[dict[str, Any]]) -> pl.DataFrame:
    """Rows for a declared table; columns a row leaves out are null."""
    return pl.DataFrame(rows, schema=frame_schema(name))


@dataclass
class World:
    qa: pl.DataFrame
    answers: pl.DataFrame
    verdicts: pl.DataFrame
    correctness: pl.DataFrame
    relevance: pl.DataFrame
    pairwise: pl.DataFrame
    truth: dict[tuple[str, str], bool]  # (system, question_id) -> the answer is correct
    grade: dict[tuple[str, str], int]  # (question_id, chunk_id) -> true relevance grade

    def write(self, root: Path) -> None:
        from ragcourt.core import catalog
        from ragcourt.core.io import write_parquet

        for name, df in (
            ("qa", self.qa),
            ("answers", self.answers),
            ("verdicts", self.verdicts),
            ("correctness", self.correctness),
            ("relevance", self.relevance),
            ("pairwise", self.pairwise),
        ):
            write_parquet(df, root / catalog.path(name), name)


def make_world(
    n_questions: int = 40,
    accuracy: dict[str, float] | None = None,
    fpr: float = 0.4,
    fnr: float = 0.05,
    error_every: int = 0,
    seed: int = 0,
) -> World:
    """Answers of each system are truly correct with its ``accuracy``; every judge calls a
    wrong answer correct with probability ``fpr`` and a right one wrong with ``fnr`` (a
    lenient, biased judge). ``error_every``: every k-th answer of the first system failed."""
    acc = accuracy or {"alpha": 0.8, "beta": 0.55, "gamma": 0.3}
    rng = np.random.default_rng(seed)
    qids = [f"q{j:03d}" for j in range(n_questions)]
    qa = table(
        "qa",
        [
            {
                "question_id": q,
                "question": f"What is fact {q}? <b>bold</b> & 'quotes'",
                "reference_answers": [f"Fact {q} is {j * 3}.", f"It is {j * 3}."],
                "doc_id": "d0",
            }
            for j, q in enumerate(qids)
        ],
    )
    answers, verdicts, corr, truth = [], [], [], {}
    for si, (s, p) in enumerate(acc.items()):
        for j, q in enumerate(qids):
            ok = bool(rng.random() < p)
            truth[(s, q)] = ok
            failed = si == 0 and error_every > 0 and j % error_every == 0
            answers.append(
                {
                    "system": s,
                    "question_id": q,
                    "answer": None if failed else f"{s} answers {q}: {j * 3 if ok else -1}",
                    "abstained": False,
                    "retrieved": [
                        {
                            "chunk_id": f"{q}-c{r}",
                            "rank": r,
                            "score": 1.0 / r,
                            "doc_id": "d0",
                            "char_start": 0,
                            "char_end": 10,
                            "text": f"Passage {r} about {q} <script>alert(1)</script>",
                        }
                        for r in (1, 2)
                    ],
                    "query_variants": [],
                    "model": "m",
                    "error": "timeout" if failed else None,
                }
            )

            def judge(ok: bool = ok) -> bool:
                return bool(rng.random() >= fnr) if ok else bool(rng.random() < fpr)

            v1, v2 = judge(), judge()
            arb = judge() if v1 != v2 else None
            final = v1 if v1 == v2 else arb
            verdicts.append(
                {
                    "system": s,
                    "question_id": q,
                    "abstained": False,
                    "primary1_judge": "token_f1",
                    "primary1_verdict": None if failed else v1,
                    "primary1_score": None if failed else float(v1) * 0.5 + 0.25,
                    "primary2_judge": "ref_similarity",
                    "primary2_verdict": None if failed else v2,
                    "primary2_score": None if failed else float(v2) * 0.6 + 0.2,
                    "arbitrator_judge": "llm" if arb is not None else None,
                    "arbitrator_verdict": None if failed else arb,
                    "agree": None if failed else v1 == v2,
                    "arbitrator_called": (not failed) and arb is not None,
                    "final_verdict": None if failed else final,
                    "resolution": "error"
                    if failed
                    else ("agreement" if v1 == v2 else "arbitration"),
                    "error": "answer failed: timeout" if failed else None,
                }
            )
            score = float(np.clip((0.75 if ok else 0.45) + rng.normal(0, 0.15), 0, 1))
            corr.append(
                {
                    "system": s,
                    "question_id": q,
                    "correctness": None if failed else score,
                    "rationale": "synthetic",
                    "error": "answer failed" if failed else None,
                }
            )
    rel, grade = [], {}
    for q in qids:
        for r in (1, 2):
            g_true = int(rng.integers(0, 3))
            grade[(q, f"{q}-c{r}")] = g_true
            g = g_true if rng.random() < 0.7 else int(rng.integers(0, 3))
            rel.append(
                {
                    "question_id": q,
                    "chunk_id": f"{q}-c{r}",
                    "doc_id": "d0",
                    "n_systems": 3,
                    "relevance": g,
                    "reason": "synthetic",
                    "model": "m",
                    "prompt_version": "v1",
                }
            )
    systems = sorted(acc)
    pw = []
    for i, a in enumerate(systems):
        for b in systems[i + 1 :]:
            for q in qids:
                ta, tb = truth[(a, q)], truth[(b, q)]
                s_true = 0.5 + 0.5 * (int(ta) - int(tb))
                # a judge that favours system_a a little
                score = float(np.clip(s_true + 0.15 + rng.normal(0, 0.2), 0, 1))
                pw.append(
                    {
                        "system_a": a,
                        "system_b": b,
                        "question_id": q,
                        "judge": "dice",
                        "score_a": score,
                        "score_b": 1 - score,
                        "scheme": "soft",
                        "in_swiss": True,
                        "in_round_robin": True,
                    }
                )
    return World(
        qa,
        table("answers", answers),
        table("verdicts", verdicts),
        table("correctness", corr),
        table("relevance", rel),
        table("pairwise", pw),
        truth,
        grade,
    )


@pytest.fixture()
def world() -> World:
    """The default synthetic world (40 questions, 3 systems, a lenient judge)."""
    return make_world()


@pytest.fixture()
def world_factory() -> Callable[..., World]:
    """:func:`make_world`, for tests that need other settings."""
    return make_world


@pytest.fixture()
def frame() -> Callable[[str, list[dict[str, Any]]], pl.DataFrame]:
    """:func:`table`: rows for a declared table."""
    return table
