"""The QA-filter contract and registry: what a QA-quality filter takes and returns.

A QA filter scores candidate QA items in one batch: ``filter(gw, items, cfg, desc)`` returns
one :class:`JudgeOutcome` per :class:`QAItem`, in order, with a score or an explicit error
(never an invented value). Filters are registered by kind in :data:`QA_FILTERS`
(:class:`ragcourt.core.registry.Registry`): the prompted judges in :mod:`ragcourt.qagen.filters`,
the trained ones in :mod:`ragcourt.qagen.trained_filter`, the quality rules in
:mod:`ragcourt.qagen.quality`. QA generation runs one filter per role of
:data:`FILTER_ROLES`, in that order (spec §2): the kind ``qagen.filter_kinds.<role>`` names, or
when null the kind registered as the role's default (``register(kind, default=role)``).
The registry imports both (and entry-point plug-ins) on first lookup; this module imports
none of them (no import cycles).

A filter kind may register its own settings (``@QA_FILTERS.register("kind", config=Model)``);
params give them under ``qagen.filter_settings.<kind>`` and :func:`with_kind_settings` hands the
validated model to the filter as ``cfg.settings`` (``ragcourt kinds qa_filter`` lists them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ragcourt.core.registry import Registry
from ragcourt.qagen.params import QAGenFilterKinds

if TYPE_CHECKING:
    from ragcourt.llm import Gateway


@dataclass(frozen=True)
class QAItem:
    """One candidate QA item as a filter sees it (a filter reads only the fields it needs)."""

    question: str
    answer: str
    context: str


@dataclass(frozen=True)
class JudgeSettings:
    """Sampling settings and prompt location shared by the QA filters."""

    model: str
    prompt_version: str = "v1"  # the filters' own prompts (qagen_filters.yaml)
    writer_prompt_version: str = "v1"  # the question writer's (qagen.yaml; echo checks)
    prompts_dir: Path | None = None
    temperature: float = 0.0
    seed: int | None = 0
    max_tokens: int = 160
    reason: bool = False  # one-token prompts: generated reason + label instead of P(yes)
    trained_weights: str | None = None  # trained judges' weights folder (None: shipped)
    settings: Any = None  # the filter kind's own settings (its registered model); None: none


@dataclass(frozen=True)
class JudgeOutcome:
    """One judge's result for one item: ``score``/``reason`` when ok, else ``error`` + ``raw``."""

    judge: str
    score: float | None
    reason: str | None
    error: str | None = None
    raw: str = ""
    model: str = ""
    form: str | None = None  # "probability" (P(yes)) | "generated" (JSON reply)

    @property
    def ok(self) -> bool:
        return self.error is None and self.score is not None

    def passes(self, threshold: float) -> bool:
        """True iff the judge succeeded and ``score >= threshold``."""
        return self.ok and self.score is not None and self.score >= threshold


class QAFilter(Protocol):
    """A registered QA filter: one outcome per item, in order (``[]`` for no items)."""

    def __call__(
        self,
        gw: Gateway,
        items: Sequence[QAItem],
        cfg: JudgeSettings,
        desc: str | None = None,
    ) -> list[JudgeOutcome]: ...


QA_FILTERS: Registry[QAFilter] = Registry(
    "QA filter",
    builtins=("ragcourt.qagen.filters", "ragcourt.qagen.quality", "ragcourt.qagen.trained_filter"),
)

FILTER_ROLES: tuple[str, ...] = tuple(QAGenFilterKinds.model_fields)
"""The filter roles, in the order QA generation runs them: the keys of ``qagen.filter_kinds``
(and of ``qagen.thresholds``, the summary's keys)."""


def role_kinds(kinds: QAGenFilterKinds) -> dict[str, str]:
    """The QA filter kind playing each role, in run order: ``qagen.filter_kinds.<role>``,
    or when null the kind registered as that role's default."""
    return {
        role: QA_FILTERS.resolve(getattr(kinds, role), f"qagen.filter_kinds.{role}", role)
        for role in FILTER_ROLES
    }


def with_kind_settings(
    kind: str, cfg: JudgeSettings, given: Mapping[str, Mapping[str, Any]]
) -> JudgeSettings:
    """``cfg`` carrying ``kind``'s own settings: ``given[kind]`` (``qagen.filter_settings``)
    validated against the model the kind registered (one-line ConfigError naming the key)."""
    key = f"qagen.filter_settings.{kind}"
    return replace(cfg, settings=QA_FILTERS.settings(kind, given.get(kind), key))


def check_filter_settings(given: Mapping[str, Mapping[str, Any]]) -> None:
    """Every kind under ``qagen.filter_settings`` is registered and its settings validate."""
    for kind, data in given.items():
        QA_FILTERS.settings(kind, data, f"qagen.filter_settings.{kind}")
