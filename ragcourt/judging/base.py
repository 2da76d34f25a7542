"""Judge protocol and registry: a judge turns (question, answer, reference answers) into a
binary verdict with a justification and, where it has one, a score.

Users plug in a judge type with ``@register_judge("my_kind")`` on a factory
``(name, spec, ctx) -> Judge``; ``params.yaml`` then configures instances of it under
``judge.judges`` by ``kind``. A judge never raises on one bad item: it returns a
:class:`JudgeVerdict` with ``error`` set and ``verdict=None`` (an error row downstream).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from ragcourt.core.errors import ConfigError
from ragcourt.core.params import JudgeSpec, Params

if TYPE_CHECKING:
    from ragcourt.llm import Gateway


@dataclass(frozen=True)
class JudgeItem:
    """One thing to judge: a candidate ``answer`` to ``question`` against ``references``
    (any one reference may match, DAFE's multi-reference rule)."""

    question: str
    answer: str
    references: tuple[str, ...]


@dataclass(frozen=True)
class JudgeVerdict:
    """A judge's output for one item. ``verdict`` is True (correct), False (incorrect) or
    None when the judge failed (then ``error`` says why)."""

    judge: str
    verdict: bool | None
    justification: str = ""
    score: float | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and self.verdict is not None


@runtime_checkable
class Judge(Protocol):
    """A configured judge instance. ``judge`` keeps order and length of ``items``."""

    name: str
    uses_llm: bool

    def judge(self, items: Sequence[JudgeItem]) -> list[JudgeVerdict]: ...


@dataclass
class JudgeContext:
    """What a factory may need: the params and a lazily created gateway for ``stage``."""

    params: Params
    stage: str = "judge"
    _gateway: Gateway | None = field(default=None, repr=False)

    @cached_property
    def gateway(self) -> Gateway:
        if self._gateway is not None:
            return self._gateway
        from ragcourt.llm import Gateway

        return Gateway(self.params.llm, stage=self.stage)


JudgeFactory = Callable[[str, JudgeSpec, JudgeContext], Judge]
_REGISTRY: dict[str, JudgeFactory] = {}


def register_judge(kind: str) -> Callable[[JudgeFactory], JudgeFactory]:
    """Decorator: make ``kind`` usable as ``judge.judges.<name>.kind`` in params.yaml."""

    def deco(factory: JudgeFactory) -> JudgeFactory:
        if kind in _REGISTRY and _REGISTRY[kind] is not factory:
            raise ConfigError(f"judge kind '{kind}' is already registered")
        _REGISTRY[kind] = factory
        return factory

    return deco


def registered_kinds() -> list[str]:
    _load_builtin()
    return sorted(_REGISTRY)


def _load_builtin() -> None:
    """Import the built-in judge modules so their ``@register_judge`` runs."""
    from ragcourt.judging import lexical, llm_judges, semantic  # noqa: F401


def build_judge(name: str, spec: JudgeSpec, ctx: JudgeContext) -> Judge:
    """Instantiate judge ``name`` from its spec; ConfigError names the key if unknown."""
    _load_builtin()
    try:
        factory = _REGISTRY[spec.kind]
    except KeyError:
        raise ConfigError(
            f"judge.judges.{name}.kind: unknown judge kind '{spec.kind}' "
            f"(registered: {sorted(_REGISTRY)})"
        ) from None
    return factory(name, spec, ctx)


def build_judges(names: Sequence[str], ctx: JudgeContext) -> dict[str, Judge]:
    """Build the named judges from ``ctx.params.judge.judges`` (each built once)."""
    specs = ctx.params.judge.judges
    out: dict[str, Judge] = {}
    for name in names:
        if name in out:
            continue
        if name not in specs:
            raise ConfigError(f"judge '{name}' is not defined under judge.judges")
        out[name] = build_judge(name, specs[name], ctx)
    return out


def require_threshold(name: str, spec: JudgeSpec, default: float | None = None) -> float:
    """The spec's threshold (or ``default``); ConfigError when neither is set."""
    thr = spec.threshold if spec.threshold is not None else default
    if thr is None:
        raise ConfigError(f"judge.judges.{name}.threshold is required for kind '{spec.kind}'")
    return float(thr)
