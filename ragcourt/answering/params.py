"""The ``controls`` section of ``params.yaml``: the control systems the answer stage adds."""

from __future__ import annotations

from typing import Literal, Protocol

from pydantic import (
    Field,
    StrictInt,
    field_validator,
)

from ragcourt.core.params import (
    Strict,
)
from ragcourt.llm.params import LLMView
from ragcourt.retrieval.params import RetrievalView

ControlKind = Literal["oracle", "random", "none", "shuffled"]


CONTROL_KINDS: tuple[ControlKind, ...] = ("oracle", "random", "none", "shuffled")


DEFAULT_CONTROL_KINDS: tuple[ControlKind, ...] = ("oracle", "random", "shuffled")


class ControlsParams(Strict):
    """Control systems added beside the configured ones (spec §3): ``oracle`` (the
    chunks holding the ground-truth span), ``random`` (k random chunks), ``none`` (closed book)
    and ``shuffled`` (the base system's answer to another question). They are answer-stage
    systems, so the switch lives here and not under ``tournament``: the answer stage depends
    on this section only, and judging, the tournament and the report read the ``control``
    column of the answers. ``base``: the built-in system whose chunking / top-k / generator
    they copy (null: the first built-in system). ``seed`` seeds ``random`` and ``shuffled``;
    ``bootstrap`` is the replicates of the DAFE discrimination check (judge summary)."""

    kinds: list[ControlKind] = Field(default_factory=lambda: list(DEFAULT_CONTROL_KINDS))
    base: str | None = None
    seed: StrictInt = 0
    bootstrap: StrictInt = Field(default=1000, ge=0, le=1_000_000)

    @field_validator("kinds")
    @classmethod
    def _unique(cls, value: list[ControlKind]) -> list[ControlKind]:
        dup = sorted({k for k in value if value.count(k) > 1})
        if dup:
            raise ValueError(f"control kind(s) {dup} listed twice")
        return value


class AnsweringView(RetrievalView, LLMView, Protocol):
    """The params the answer stage reads: retrieval's and llm's views, ``controls`` and
    ``systems_file``."""

    controls: ControlsParams
    systems_file: str
