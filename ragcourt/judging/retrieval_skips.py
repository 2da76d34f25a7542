"""Systems whose retrieval is not judged (spec §5): they returned no passages at all.

A system none of whose answer rows has a passage (an external system that supplies no
contexts, a closed-book control) gives the relevance and UDCG judges nothing to grade. That is
not a failure: stage ``judge_retrieval`` writes no rows for it (so ``failure.fail_on_system``
cannot count it), the judge summary lists it under ``retrieval_not_judged`` with
:data:`NO_RETRIEVAL_JUDGING`, and the report says so. A system with passages on some questions
is judged; its rows without passages keep their :func:`ragcourt.core.provenance.retrieval_gap`
label and are not counted as failed calls.

Only polars is imported, so any layer may use this module.
"""

from __future__ import annotations

import polars as pl

from ragcourt.core.provenance import has_contexts

NO_RETRIEVAL_JUDGING = "no retrieval judging: the system returned no passages"


def systems_without_passages(answers: pl.DataFrame) -> list[str]:
    """Systems of ``answers`` none of whose rows has a passage in ``retrieved`` (table
    order): their retrieval is not judged."""
    if answers.is_empty():
        return []
    per = answers.group_by("system", maintain_order=True).agg(has_contexts().any().alias("any"))
    return per.filter(~pl.col("any"))["system"].to_list()


def retrieval_not_judged(answers: pl.DataFrame) -> dict[str, str]:
    """``{system: NO_RETRIEVAL_JUDGING}`` for :func:`systems_without_passages` (the judge
    summary's ``retrieval_not_judged``)."""
    return {s: NO_RETRIEVAL_JUDGING for s in systems_without_passages(answers)}
