"""correctness_mode 'similarity': clipped max cosine from an embedding_similarity judge (real
MiniLM), judge errors as error results, and the params check of ``correctness_judge``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from ragcourt.core.params import JudgeParams, JudgeSpec, load_params
from ragcourt.judging.builders import build_judge
from ragcourt.judging.correctness import similarity_correctness
from ragcourt.judging.vocabulary import AnswerItem, AnswerVerdict, JudgeContext

ROOT = Path(__file__).resolve().parents[3]


def test_similarity_correctness_clips_to_unit_interval_and_keeps_errors() -> None:
    verdicts = [
        AnswerVerdict("fixed", False, score=-0.2),
        AnswerVerdict("fixed", True, score=0.84),
        AnswerVerdict("fixed", None, error="embedding failed"),
    ]
    out = similarity_correctness(verdicts)
    assert [r.score for r in out] == [0.0, 0.84, None]
    assert out[2].error == "embedding failed"
    assert "0.840" in out[1].rationale


def test_similarity_correctness_with_real_minilm_orders_answers() -> None:
    params = load_params(ROOT / "params.yaml")
    spec = JudgeSpec(kind="embedding_similarity", embedder="all-minilm-l6-v2", threshold=0.7)
    judge = build_judge("sim", spec, JudgeContext(params, stage="test_judging"))
    ref = ("The treaty was signed in Ghent in December 1814.",)
    items = [
        AnswerItem("When was the treaty signed?", "It was signed at Ghent in December 1814.", ref),
        AnswerItem("When was the treaty signed?", "Bananas are rich in potassium.", ref),
    ]
    close, far = similarity_correctness(judge.judge(items))
    assert close.error is None and far.error is None
    assert close.score is not None and far.score is not None
    assert 0.0 <= far.score < close.score <= 1.0
    assert close.score > 0.7


def test_similarity_mode_needs_an_embedding_similarity_judge() -> None:
    judges = {
        "tf1": JudgeSpec(kind="token_f1", threshold=0.5),
        "em": JudgeSpec(kind="containment"),
        "llm": JudgeSpec(kind="llm"),
    }
    base: dict[str, Any] = {"judges": judges, "primaries": ["tf1", "em"], "arbitrator": "llm"}
    with pytest.raises(ValidationError, match="correctness_judge 'tf1'"):
        JudgeParams(**base, correctness_mode="similarity", correctness_judge="tf1")
    with pytest.raises(ValidationError, match="correctness_judge 'nope'"):
        JudgeParams(**base, correctness_mode="similarity", correctness_judge="nope")
    JudgeParams(**base, correctness_mode="rubric", correctness_judge="nope")  # unused: fine
