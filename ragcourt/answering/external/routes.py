"""Answer routes: how an external system is asked (``answers_file``, ``python``, ``http``,
``openai_chat``: the ``http`` kind with the ``openai_chat`` shortcut). :data:`ANSWER_ROUTES`
maps a spec's :attr:`~ragcourt.answering.external.specs.ExternalSpec.route` to an
:class:`AnswerRoute`; each built-in route registers in the module that implements it, which
the registry imports on first lookup (a plug-in route is an entry point).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import polars as pl

from ragcourt.core.params import LimitsParams
from ragcourt.core.registry import Registry


@dataclass(frozen=True)
class AnswerRoute:
    """``answer(name, model, spec, qa, previous, limits)``: rows of table ``answers``, one
    per question (``previous``: the partition whose failed questions are asked again;
    ``limits``: the size bounds of params ``limits``); ``target(spec)``: what answers, for
    ``ragcourt systems list`` (never a secret)."""

    answer: Callable[[str, str, Any, pl.DataFrame, pl.DataFrame | None, LimitsParams], pl.DataFrame]
    target: Callable[[Any], str]
    #: answers every question at no cost (a file): asked part of the QA set (the race's rounds),
    #: it is given the whole set, against which its rows are checked, and the part is kept
    reads_whole_set: bool = False


ANSWER_ROUTES: Registry[AnswerRoute] = Registry(
    "answer route",
    builtins=(
        "ragcourt.answering.external.answers_file",
        "ragcourt.answering.external.python_callable",
        "ragcourt.answering.external.http_endpoint",
    ),
)
