"""The ``judge`` section of ``params.yaml``: DAFE judging, correctness, relevance and UDCG."""

from __future__ import annotations

from typing import Any, Protocol

from pydantic import (
    Field,
    StrictBool,
    StrictInt,
    model_validator,
)

from ragcourt.core.params import (
    NonEmptyStr,
    Strict,
)
from ragcourt.llm.params import LLMView
from ragcourt.retrieval.params import RetrievalView


class JudgeSpec(Strict):
    """A judge instance: ``kind`` names a registered judge type (``token_f1``,
    ``containment``, ``embedding_similarity``, ``llm`` or a user-registered one); the other
    keys configure it (``model`` null -> ``llm.model``; ``embedder`` a key of ``embedders``);
    ``settings``: the kind's own settings, validated against the model it registered
    (``ragcourt kinds answer_judge``)."""

    kind: str
    model: str | None = None
    embedder: str | None = None
    threshold: float | None = None
    prompt_version: str = "v1"
    settings: dict[str, Any] = Field(default_factory=dict)


def _default_judges() -> dict[str, JudgeSpec]:
    return {
        "token_f1": JudgeSpec(kind="token_f1", threshold=0.5),
        "ref_similarity": JudgeSpec(kind="embedding_similarity", embedder="minilm", threshold=0.7),
        "trained": JudgeSpec(kind="trained"),
        "llm": JudgeSpec(
            kind="llm", model="local/qwen2.5-coder-1.5b", prompt_version="v2", threshold=0.5
        ),
    }


class UDCGParams(Strict):
    """UDCG (spec §5): ``model`` gives P(NO-RESPONSE) (null -> ``llm.model``); a passage is
    relevant (R = +1) when its RAGElo grade >= ``relevance_threshold``; UDCGθ is fitted
    when ``fit_theta`` and at least ``theta_min_pairs`` ranked context pairs exist."""

    model: str | None = None
    gamma: float = Field(default=1.0 / 3.0, ge=0, le=1)
    k: StrictInt = Field(default=5, gt=0)
    relevance_threshold: StrictInt = Field(default=1, ge=1, le=2)
    fit_theta: StrictBool = True
    theta_min_pairs: StrictInt = Field(default=50, ge=1)


class JudgeParams(Strict):
    """DAFE judging (spec §4) plus correctness, relevance and UDCG (spec §5).
    ``prompt_version`` selects the correctness / relevance / UDCG prompts."""

    judges: dict[str, JudgeSpec] = Field(default_factory=_default_judges)
    primaries: list[str] = Field(default_factory=lambda: ["token_f1", "trained"])
    arbitrator: str = "llm"
    correctness_model: str | None = None
    # a kind of the correctness grader registry (ragcourt.judging.graders, checked against
    # it by ragcourt.judging.builders.check_judge_params; null: the kind registered as the
    # default, marked by `ragcourt kinds correctness_grader`): trained: no LLM, the trained
    # correctness judge's score, max over references; rubric: JSON rationale + score
    # (RAGalyst); expected: one next-token call, the score is the probability-weighted mean of
    # the rubric levels (G-Eval style, needs logprobs); similarity: no LLM, the score of an
    # embedding_similarity answer judge (its settings' ``judge``): max cosine to a reference)
    correctness_mode: NonEmptyStr | None = None
    # the correctness grader kind's own settings, validated against the model it registered
    # (`ragcourt kinds correctness_grader`)
    correctness_settings: dict[str, Any] = Field(default_factory=dict)
    relevance_model: str | None = None
    # a kind of the relevance grader registry (ragcourt.judging.relevance_graders, checked by
    # ragcourt.judging.builders.check_judge_params; null: the registered default):
    # trained: P(relevant) of the trained judge (no LLM; also UDCG's P(NO-RESPONSE)); llm:
    # RAGElo 0/1/2 by relevance_model
    relevance_grader: NonEmptyStr | None = None
    # the relevance grader kind's own settings (`ragcourt kinds relevance_grader`)
    relevance_settings: dict[str, Any] = Field(default_factory=dict)
    # weights folder of the trained judges (judge kind / correctness_mode / relevance_grader
    # ``trained``, QA filter ``trained_answerability``); null: the weights shipped in the package
    trained_weights: str | None = None
    prompt_version: str = "v5"
    # one-token judges (prompt v2: LLM verdict, expected correctness, relevance): false reads
    # the label's next-token probabilities (form "probability"); true generates a written
    # reason and the label (form "generated"), as models without logprobs always do
    reason: StrictBool = False
    udcg: UDCGParams = Field(default_factory=UDCGParams)

    @model_validator(mode="after")
    def _judges_known(self) -> JudgeParams:
        if len(self.primaries) != 2:
            raise ValueError("primaries must name exactly two judges")
        if len(set(self.primaries)) != 2 or self.arbitrator in self.primaries:
            raise ValueError("primaries and arbitrator must be three different judges")
        for name in [*self.primaries, self.arbitrator]:
            if name not in self.judges:
                raise ValueError(f"judge '{name}' is not defined under judge.judges")
        return self

    @model_validator(mode="before")
    @classmethod
    def _moved_keys(cls, data: Any) -> Any:
        if isinstance(data, dict) and "correctness_judge" in data:
            raise ValueError(
                "correctness_judge moved to judge.correctness_settings.judge (the settings of "
                "the correctness grader kind that reads it)"
            )
        return data


class BootstrapRef(Protocol):
    """What judging reads of the ``controls`` section: the discrimination check's bootstrap."""

    bootstrap: int
    seed: int


class JudgingView(RetrievalView, LLMView, Protocol):
    """The params judging reads: retrieval's and llm's views, ``judge`` and
    ``controls.bootstrap`` / ``controls.seed``."""

    judge: JudgeParams

    @property
    def controls(self) -> BootstrapRef: ...
