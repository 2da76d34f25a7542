"""Answer rows of one external system, whatever its kind.

``previous`` is the system's partition from an earlier run whose freshness hashes still match
(it had error rows): a Python or HTTP system is asked again only the questions that failed.
An answers-file system is rebuilt from its file (no calls are involved).
"""

from __future__ import annotations

import polars as pl

from ragcourt.answering.external.answers_file import answer_from_file
from ragcourt.answering.external.http_endpoint import answer_over_http
from ragcourt.answering.external.python_callable import answer_with_python
from ragcourt.answering.external.specs import AnswersFileSpec, HttpSpec
from ragcourt.answering.systems import ExternalSystem


def answer_external(
    system: ExternalSystem, qa: pl.DataFrame, previous: pl.DataFrame | None = None
) -> pl.DataFrame:
    """Rows of table ``answers`` for ``system``: one per QA question, in QA order."""
    spec, model = system.spec, system.generator_model
    if isinstance(spec, AnswersFileSpec):
        return answer_from_file(system.name, model, spec.path, qa)
    if isinstance(spec, HttpSpec):
        return answer_over_http(system.name, model, spec, qa, previous)
    return answer_with_python(system.name, model, spec, qa, previous)
