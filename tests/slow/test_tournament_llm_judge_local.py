"""Smoke test: the DICE LLM judge on the real embedded local model (SmolLM2-135M)."""

from pathlib import Path

import pytest
from _tournament_data import answers_frame, qa_frame

from ragcourt.tournament.builders import build_pairwise_judge
from ragcourt.tournament.llm_judge import LLMPairwiseJudge
from ragcourt.tournament.memo import JudgementMemo
from ragcourt.tournament.pairwise import PairwiseContext

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow  # ~1 min on 2 shared cores: model load + 2 analyses + 2 verdicts
def test_llm_judge_real_local_model_gives_label_probabilities(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ragcourt.orchestration.params import load_params

    monkeypatch.chdir(ROOT)
    p = load_params(ROOT / "params.yaml")
    p.llm.cache_dir = str(tmp_path / "cache")
    p.llm.metrics_dir = str(tmp_path / "metrics")
    p.tournament.analysis_max_tokens = 24
    p.tournament.evidence_passages = 1
    ctx = PairwiseContext(p, answers=answers_frame(["x", "y"], 1), qa=qa_frame(1))
    judge = build_pairwise_judge("llm", ctx)
    assert isinstance(judge, LLMPairwiseJudge)
    memo = JudgementMemo(judge, ["q00"], p.tournament.margin)
    (match,) = memo.play_as("swiss")([("x", "y")])
    judge.gateway.write_metrics()
    (row,) = memo.rows("x", "y")
    assert row["error"] is None, row["error"]
    for tag in ("ab", "ba"):
        probs = [row[f"p_{tag}_a"], row[f"p_{tag}_b"], row[f"p_{tag}_tie"]]
        assert sum(probs) == pytest.approx(1.0) and min(probs) > 0
    assert row["rationale_ab"].strip()
    assert match.n == 1 and match.s_a + match.s_b == pytest.approx(1.0)
    assert (tmp_path / "metrics" / "llm_tournament.json").is_file()
