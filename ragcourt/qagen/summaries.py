"""The shape of ``data/qa/summary.json`` (the qagen stage's DVC metrics file).

Generated QA sets write a :class:`QASummary` (deterministic: no timings); a bring-your-own QA
file writes a :class:`ByoQASummary`. Both are written as ``model.model_dump(mode="json")``;
:func:`parse_qa_summary` reads either back (told apart by ``stop_reason``). Pure pydantic, so
readers (the report) do not import the generation code.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

from pydantic import Field, TypeAdapter

from ragcourt.core.fixed_model import FixedModel

GeneratedStop = Literal["n_items_reached", "max_attempts_reached", "contexts_exhausted"]
STOP_N_ITEMS: Final = "n_items_reached"
STOP_MAX_ATTEMPTS: Final = "max_attempts_reached"
STOP_EXHAUSTED: Final = "contexts_exhausted"
STOP_QA_FILE: Final = "qa_file"


class QAModels(FixedModel):
    """Resolved model strings of the three agent roles."""

    question: str
    answer: str
    filter: str


class QASummary(FixedModel):
    """A generated QA set: budget, stop reason, rejections by check, per-filter statistics.

    ``acceptance_rate`` = accepted / attempts (0.0 without attempts); ``rejections`` counts
    the first failed check of every rejected candidate; per filter (keys in run order):
    ``judged`` = items scored, ``judge_below_threshold`` = scored below ``thresholds``,
    ``judge_errors`` = model/parse failures, ``judge_mean_score`` = mean of successful scores
    (null when none).
    """

    requested: int
    accepted: int
    attempts: int
    acceptance_rate: float
    stop_reason: GeneratedStop
    max_attempts: int
    contexts_available: int
    documents_covered: int
    rejections: dict[str, int]
    judged: dict[str, int]
    judge_below_threshold: dict[str, int]
    judge_errors: dict[str, int]
    judge_mean_score: dict[str, float | None]
    thresholds: dict[str, float]
    # filter -> form (probability | generated) -> count; {} in summaries written before it
    judge_forms: dict[str, dict[str, int]] = Field(default_factory=dict)
    models: QAModels
    prompt_version: str
    filter_prompt_version: str = "v1"  # summaries written before it used the v1 filters
    reference_chunking: str
    seed: int
    method: str = "agents"  # qagen.method (summaries written before it: the agents)
    # answer-first: answer type -> {"tried": n, "accepted": m}; {} for the agents method
    answer_types: dict[str, dict[str, int]] = Field(default_factory=dict)


class ByoQASummary(FixedModel):
    """A bring-your-own QA file used as is: no attempts, no rejections."""

    requested: int
    accepted: int
    attempts: int = 0
    acceptance_rate: None = None
    stop_reason: Literal["qa_file"] = STOP_QA_FILE
    qa_file: str
    rejections: dict[str, int] = Field(default_factory=dict)


AnyQASummary = Annotated[QASummary | ByoQASummary, Field(discriminator="stop_reason")]
_ADAPTER: TypeAdapter[QASummary | ByoQASummary] = TypeAdapter(AnyQASummary)


def parse_qa_summary(data: Any) -> QASummary | ByoQASummary:
    """Validate a loaded ``summary.json`` (either kind); pydantic ValidationError if neither."""
    return _ADAPTER.validate_python(data)
