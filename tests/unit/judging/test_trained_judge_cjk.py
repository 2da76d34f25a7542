"""The trained correctness judge reads English; a pair with CJK text is scored by character
token F1 and says so, full-width forms are folded before the trained judge reads, and English
pairs keep the trained score (real shipped weights, real MiniLM)."""

from __future__ import annotations

from ragcourt.judging.trained_correctness import (
    CJK_F1_THRESHOLD,
    TrainedCorrectnessJudge,
    trained_reference_scores,
)
from ragcourt.judging.vocabulary import AnswerItem
from ragcourt.retrieval.trained_judges.judges import shipped_judges


def test_cjk_pairs_are_scored_by_token_f1_and_english_by_the_trained_judge() -> None:
    judges = shipped_judges()
    items = [
        AnswerItem("比例是多少？", "九成", ("９０％",)),
        AnswerItem("比例是多少？", "90%", ("９０％",)),
        AnswerItem("哪一年？", "宁夏", ("１９８６年",)),
        AnswerItem("Who wrote it?", "George Washington", ("Washington",)),
    ]
    scores = trained_reference_scores(judges, items)
    assert scores[0] == (0.0, 0, True)
    assert scores[1] == (judges.correctness(["90%"], ["90%"])[0], 0, False)
    assert scores[2] == (0.0, 0, True)
    assert scores[3] == (judges.correctness(["George Washington"], ["Washington"])[0], 0, False)
    verdicts = TrainedCorrectnessJudge("trained", judges, 0.5).judge(items)
    assert verdicts[0].verdict is False and "token F1" in verdicts[0].justification
    assert str(CJK_F1_THRESHOLD) in verdicts[0].justification
    assert verdicts[1].verdict is True  # full-width forms folded before the trained judge reads
    assert "trained correctness" in verdicts[3].justification
