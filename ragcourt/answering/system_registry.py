"""System kinds (spec §3): the registry of the kinds a systems-file entry may name.

An entry's kind is its ``kind`` key (default ``builtin``; an ``{answers: shuffled, ...}`` entry
is kind ``shuffled``). :data:`SYSTEM_KINDS` maps it to a :class:`SystemKind`, whose ``parse``
turns the entry into a :class:`~ragcourt.answering.candidate_system.CandidateSystem`. The
built-in kinds are one module each in :mod:`ragcourt.answering.system_kinds` (``builtin``,
``shuffled``, and the external kinds ``answers_file`` / ``python`` / ``http``); the registry
imports that package on first lookup, so a new kind is one new module there (or an entry-point
plug-in, :mod:`ragcourt.core.registry`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragcourt.answering.candidate_system import CandidateSystem
from ragcourt.answering.params import AnsweringView
from ragcourt.core.registry import Registry

BUILTIN = "builtin"  # the kind of an entry without ``kind``
SHUFFLED = "shuffled"  # the kind of an ``answers: shuffled`` entry
CONTROL_PREFIX = "control-"  # name prefix of the systems ``controls.kinds`` adds


@dataclass(frozen=True)
class ParseContext:
    """Where an entry is parsed: ``label`` names it in errors (``<file>: system 'x'``);
    ``earlier`` are the systems declared before it."""

    params: AnsweringView
    source: Path
    label: str
    earlier: Sequence[CandidateSystem] = ()


@dataclass(frozen=True)
class SystemKind:
    """A kind of systems-file entry: ``parse(entry, ctx)`` validates the entry as written
    (pydantic ``ValidationError`` or one-line ``ConfigError``); ``takes_defaults``: the file's
    ``defaults`` are merged under its entries and grids may expand it."""

    parse: Callable[[Mapping[str, Any], ParseContext], CandidateSystem]
    takes_defaults: bool = False


SYSTEM_KINDS: Registry[SystemKind] = Registry(
    "system kind", builtins=("ragcourt.answering.system_kinds",)
)


def kind_of(raw: Mapping[str, Any]) -> object:
    """The kind an entry names (not yet checked against :data:`SYSTEM_KINDS`)."""
    return raw.get("kind", SHUFFLED if "answers" in raw else BUILTIN)
