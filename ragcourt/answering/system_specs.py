"""The systems-file syntax of built-in and shuffled systems and of the file itself (spec §3):
pydantic models, unknown keys are errors. External systems' syntax:
:mod:`ragcourt.answering.external.specs`; the file's layout: :mod:`ragcourt.answering.systems`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from ragcourt.answering.names import NamedSpec
from ragcourt.answering.retriever_kinds import check_retriever, is_control, needs_embedder
from ragcourt.core.fixed_model import HandWrittenModel


class FusionSpec(HandWrittenModel):
    """RAG-Fusion: the LLM writes ``n_variants`` rewrites of the question; the rankings of the
    original and every variant are fused by RRF (score = Σ 1/(rrf_k + rank))."""

    n_variants: int = Field(default=4, ge=1, le=16)
    model: str | None = None  # null -> llm.model
    prompt_version: str = "v1"
    max_tokens: int = Field(default=128, gt=0)


class SystemSpec(NamedSpec):
    """One built-in system as written in the systems file (before resolving defaults);
    ``retriever`` is a registered kind (:mod:`ragcourt.answering.retriever_kinds`)."""

    chunking: str
    embedder: str | None = None
    retriever: str
    top_k: int = Field(default=5, ge=1, le=100)
    fusion: FusionSpec | None = None
    generator: str | None = None  # null -> llm.model
    prompt_version: str = "v1"
    max_tokens: int = Field(default=128, gt=0)

    @field_validator("fusion", mode="before")
    @classmethod
    def _fusion_shorthand(cls, value: Any) -> Any:
        """``fusion: true`` -> defaults, ``fusion: false``/``null`` -> off."""
        if value is True:
            return {}
        if value is False:
            return None
        return value

    @field_validator("retriever")
    @classmethod
    def _retriever_is_registered(cls, value: str) -> str:
        return check_retriever(value)

    @model_validator(mode="after")
    def _embedder_needed(self) -> SystemSpec:
        if needs_embedder(self.retriever) and self.embedder is None:
            raise ValueError(f"retriever '{self.retriever}' needs an embedder")
        if is_control(self.retriever) and self.fusion is not None:
            raise ValueError(f"control retriever '{self.retriever}' takes no fusion")
        return self


class ShuffledSpec(NamedSpec):
    """A shuffled-answers control: ``base``'s answer to a different question (a derangement)."""

    answers: Literal["shuffled"]
    base: str


class GridSpec(HandWrittenModel):
    """A product of factors over a base configuration."""

    prefix: str | None = None
    name: str | None = None  # str.format template over factor labels, e.g. "{retriever}-{top_k}"
    base: dict[str, Any] = Field(default_factory=dict)
    factors: dict[str, Any]  # field -> list of levels, or {label: level}


class SystemsFile(HandWrittenModel):
    defaults: dict[str, Any] = Field(default_factory=dict)
    systems: list[dict[str, Any]] = Field(default_factory=list)
    grids: list[GridSpec] = Field(default_factory=list)


def first_error(err: ValidationError) -> str:
    """The first validation error as ``key '<dotted.loc>': <message>`` (one line)."""
    first = err.errors()[0]
    loc = ".".join(str(p) for p in first["loc"]) or "<root>"
    msg = "unknown key" if first["type"] == "extra_forbidden" else first["msg"]
    return f"key '{loc}': {msg}"
