"""correctness_mode 'similarity': clipped max cosine from an embedding_similarity judge (real
MiniLM), judge errors as error results, and the check of the judge its settings name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ragcourt.core.errors import ConfigError, ParamsError
from ragcourt.judging.builders import build_grader, build_judge
from ragcourt.judging.correctness import similarity_correctness
from ragcourt.judging.graders.builtin import SimilarityGrader
from ragcourt.judging.params import JudgeParams, JudgeSpec
from ragcourt.judging.vocabulary import AnswerItem, AnswerVerdict, JudgeContext
from ragcourt.orchestration.params import Params, load_params, parse_params

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
        "sim": JudgeSpec(kind="embedding_similarity", threshold=0.7),
        "llm": JudgeSpec(kind="llm"),
    }
    base: dict[str, Any] = {"judges": judges, "primaries": ["tf1", "em"], "arbitrator": "llm"}

    def grader(mode: str, settings: dict[str, Any]) -> object:
        jp = JudgeParams(**base, correctness_mode=mode, correctness_settings=settings)
        return build_grader(JudgeContext(Params(judge=jp)))

    got = grader("similarity", {"judge": "sim"})
    assert isinstance(got, SimilarityGrader) and got.judge == "sim"
    with pytest.raises(ConfigError, match=r"^judge\.correctness_settings\.judge: 'tf1' must name"):
        grader("similarity", {"judge": "tf1"})
    with pytest.raises(ConfigError, match=r"^judge\.correctness_settings\.judge: 'ref_similarity'"):
        grader("similarity", {})  # the default, ref_similarity, is not among these judges
    with pytest.raises(ConfigError, match=r"correctness grader 'rubric' takes no settings"):
        grader("rubric", {"judge": "sim"})


def test_the_moved_flat_key_is_refused_in_one_line() -> None:
    with pytest.raises(ParamsError) as err:
        parse_params({"judge": {"correctness_judge": "ref_similarity"}}, "p.yaml")
    assert str(err.value) == (
        "p.yaml: key 'judge': correctness_judge moved to judge.correctness_settings.judge "
        "(the settings of the correctness grader kind that reads it)"
    )
