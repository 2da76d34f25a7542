"""Reference-similarity judge: cosine similarity of sentence embeddings.

score = max over references of cos(e(answer), e(reference)) with the configured embedder
(``ragcourt.retrieval.embedders.encode``, L2-normalised, so cosine = dot product); correct iff
score >= threshold. A BERTScore-like neural baseline (DAFE 3.4) with a bi-encoder.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ragcourt.judging.params import JudgeSpec, JudgingView
from ragcourt.judging.vocabulary import (
    ANSWER_JUDGES,
    AnswerItem,
    AnswerVerdict,
    JudgeContext,
    require_threshold,
)

EMBEDDING_SIMILARITY = "embedding_similarity"
"""This module's answer judge kind (the ``similarity`` correctness grader reads its verdicts)."""


def embedder_model(params: JudgingView, embedder: str) -> str:
    """Registry model name for ``embedder``: a key of ``params.embedders`` or a registry name."""
    spec = params.embedders.get(embedder)
    return spec.model if spec is not None else embedder


def reference_similarity(
    model: str, answers: Sequence[str], references: Sequence[Sequence[str]], batch_size: int = 32
) -> list[tuple[float, int]]:
    """Per item: (max cosine over its references, index of the best reference; -1 if none).
    Each text is embedded in a batch of its own (:func:`ragcourt.retrieval.embedders.singly`),
    so a score is the same whichever answers are judged with it (a shard, or all of them)."""
    from ragcourt.retrieval.embedders import encode, row_dots, singly

    flat_refs = [r for refs in references for r in refs]
    if not answers:
        return []
    with singly():
        vecs = encode(model, [*answers, *flat_refs], batch_size=batch_size)
    a_vecs, r_vecs = vecs[: len(answers)], vecs[len(answers) :]
    out: list[tuple[float, int]] = []
    pos = 0
    for i, refs in enumerate(references):
        if not refs:
            out.append((float("nan"), -1))
            continue
        mine = r_vecs[pos : pos + len(refs)]
        sims = row_dots(mine, np.broadcast_to(a_vecs[i], mine.shape))
        pos += len(refs)
        best = int(np.argmax(sims))
        out.append((float(sims[best]), best))
    return out


@dataclass
class EmbeddingSimilarityJudge:
    """Correct iff max cosine(answer, reference) >= ``threshold``; score = that cosine."""

    name: str
    model: str
    threshold: float
    batch_size: int = 32
    uses_llm: bool = False

    def judge(self, items: Sequence[AnswerItem]) -> list[AnswerVerdict]:
        sims = reference_similarity(
            self.model,
            [it.answer for it in items],
            [it.references for it in items],
            self.batch_size,
        )
        out: list[AnswerVerdict] = []
        for (sim, idx), it in zip(sims, items, strict=True):
            if idx < 0 or not it.references:
                out.append(AnswerVerdict(self.name, None, error="no reference answer"))
                continue
            ok = sim >= self.threshold
            rel = ">=" if ok else "<"
            why = (
                f"cosine similarity {sim:.3f} with reference {idx + 1} ({self.model}) "
                f"{rel} threshold {self.threshold}"
            )
            out.append(AnswerVerdict(self.name, ok, why, sim))
        return out


@ANSWER_JUDGES.register(EMBEDDING_SIMILARITY)
def _embedding_similarity(
    name: str, spec: JudgeSpec, ctx: JudgeContext
) -> EmbeddingSimilarityJudge:
    embedder = spec.embedder or next(iter(ctx.params.embedders))
    batch = ctx.params.embedders[embedder].batch_size if embedder in ctx.params.embedders else 32
    return EmbeddingSimilarityJudge(
        name=name,
        model=embedder_model(ctx.params, embedder),
        threshold=require_threshold(name, spec, 0.7),
        batch_size=batch,
    )
