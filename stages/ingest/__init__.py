"""The ``ingest`` stage: ``python -m stages ingest`` under DVC, a task in the Prefect flow."""

from __future__ import annotations

from ragcourt.orchestration.stage_def import Dep, StageDef

STAGE = StageDef(
    "ingest",
    "ragcourt.corpus.ingest:run",
    "Corpus folder -> documents; unreadable files are rejected rows with a reason.",
    deps=(Dep(param="corpus.dir"),),
    params=("corpus",),
)
