"""Answer judge kind ``trained``: the trained correctness judge (no LLM).

score = max over references of the trained correctness score of (answer, reference)
(:mod:`ragcourt.retrieval.trained_judges`: embedder cosines + lexical overlap, ridge-fitted on
STS-B train, in [0, 1]); correct iff score >= threshold (the spec's, else the judge's fitted
one). An empty answer scores 0 without a model call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ragcourt.judging.params import JudgeSpec
from ragcourt.judging.vocabulary import ANSWER_JUDGES, AnswerItem, AnswerVerdict, JudgeContext
from ragcourt.retrieval.trained_judges.judges import TrainedJudges


def trained_reference_scores(
    judges: TrainedJudges, items: Sequence[AnswerItem]
) -> list[tuple[float, int]]:
    """Per item: (max trained correctness score over its references, index of the best
    reference; -1 when it has none)."""
    pairs = [
        (i, j, it.answer, ref)
        for i, it in enumerate(items)
        if it.answer.strip()
        for j, ref in enumerate(it.references)
    ]
    scores = judges.correctness([p[2] for p in pairs], [p[3] for p in pairs])
    best: list[tuple[float, int]] = [
        (0.0, 0) if it.references else (float("nan"), -1) for it in items
    ]
    for (i, j, _, _), s in zip(pairs, scores, strict=True):
        if j == 0 or s > best[i][0]:
            best[i] = (s, j)
    return best


@dataclass
class TrainedCorrectnessJudge:
    """Correct iff the trained correctness score reaches ``threshold`` (module docstring)."""

    name: str
    judges: TrainedJudges
    threshold: float
    uses_llm: bool = False

    def judge(self, items: Sequence[AnswerItem]) -> list[AnswerVerdict]:
        out: list[AnswerVerdict] = []
        for (score, idx), it in zip(
            trained_reference_scores(self.judges, items), items, strict=True
        ):
            if idx < 0:
                out.append(AnswerVerdict(self.name, None, error="no reference answer"))
                continue
            ok = score >= self.threshold
            why = (
                f"trained correctness {score:.3f} against reference {idx + 1} "
                f"{'>=' if ok else '<'} threshold {self.threshold}"
                + ("" if it.answer.strip() else " (empty answer)")
            )
            out.append(AnswerVerdict(self.name, ok, why, score))
        return out


TRAINED_JUDGE = "trained"  # this module's answer judge kind


@ANSWER_JUDGES.register(TRAINED_JUDGE)
def _trained(name: str, spec: JudgeSpec, ctx: JudgeContext) -> TrainedCorrectnessJudge:
    judges = ctx.trained_judges
    threshold = (
        spec.threshold if spec.threshold is not None else judges.model("correctness").threshold
    )
    return TrainedCorrectnessJudge(name, judges, float(threshold))
