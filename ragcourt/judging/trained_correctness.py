"""Answer judge kind ``trained``: the trained correctness judge (no LLM).

score = max over references of the trained correctness score of (answer, reference)
(:mod:`ragcourt.retrieval.trained_judges`: embedder cosines + lexical overlap, ridge-fitted on
STS-B train, in [0, 1]); correct iff score >= threshold (the spec's, else the judge's fitted
one). An empty answer scores 0 without a model call.

The trained judge reads English, after full-width forms are folded to ASCII. A pair whose
answer or reference holds CJK text is scored by SQuAD token F1 instead (one token per CJK
character: :func:`ragcourt.corpus.answer_match.token_f1`), correct iff F1 >=
:data:`CJK_F1_THRESHOLD`, and its rationale says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ragcourt.corpus.answer_match import fold_width, token_f1
from ragcourt.corpus.language import has_cjk
from ragcourt.judging.params import JudgeSpec
from ragcourt.judging.vocabulary import ANSWER_JUDGES, AnswerItem, AnswerVerdict, JudgeContext
from ragcourt.retrieval.trained_judges.judges import TrainedJudges

CJK_F1_THRESHOLD = 0.5  # SQuAD-style: half the answer's tokens shared (the token_f1 judge's)
LEXICAL = "token F1, CJK text"  # how a pair the trained judge cannot read is scored


def reads_english(answer: str, reference: str) -> bool:
    """Whether the trained judge scores this pair (neither side holds CJK text)."""
    return not (has_cjk(answer) or has_cjk(reference))


def trained_reference_scores(
    judges: TrainedJudges, items: Sequence[AnswerItem]
) -> list[tuple[float, int, bool]]:
    """Per item: (max score over its references, index of the best reference, -1 when it has
    none; whether that score is token F1, module docstring)."""
    pairs = [
        (i, j, it.answer, ref)
        for i, it in enumerate(items)
        if it.answer.strip()
        for j, ref in enumerate(it.references)
    ]
    model = [p for p in pairs if reads_english(p[2], p[3])]
    scores = dict(
        zip(
            [(p[0], p[1]) for p in model],
            judges.correctness([fold_width(p[2]) for p in model], [fold_width(p[3]) for p in model])
            if model
            else [],
            strict=True,
        )
    )
    best: list[tuple[float, int, bool]] = [
        (0.0, 0, False) if it.references else (float("nan"), -1, False) for it in items
    ]
    for i, j, answer, ref in pairs:
        lexical = (i, j) not in scores
        s = token_f1(answer, ref) if lexical else scores[(i, j)]
        if j == 0 or s > best[i][0]:
            best[i] = (s, j, lexical)
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
        for (score, idx, lexical), it in zip(
            trained_reference_scores(self.judges, items), items, strict=True
        ):
            if idx < 0:
                out.append(AnswerVerdict(self.name, None, error="no reference answer"))
                continue
            threshold = CJK_F1_THRESHOLD if lexical else self.threshold
            ok = score >= threshold
            why = (
                f"{LEXICAL if lexical else 'trained correctness'} {score:.3f} against "
                f"reference {idx + 1} {'>=' if ok else '<'} threshold {threshold}"
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
