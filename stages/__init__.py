"""The pipeline's stages, one folder each (``stages/<name>/``): a stage's folder declares what
it runs, reads and writes and the params keys it takes (its ``STAGE``).

:data:`PIPELINE` names them in run order. DVC runs a stage with ``python -m stages <name>``
from the project root; the Prefect flows (``flows/``) and ``ragcourt run`` load the same
declarations (:func:`ragcourt.orchestration.stage_graph.stage_graph`). Add a stage: a folder
here with its ``STAGE``, its name in :data:`PIPELINE`, then ``ragcourt dvc generate``.
"""

PIPELINE: tuple[str, ...] = (
    "ingest",
    "chunk",
    "bm25",
    "embed",
    "llm_routes",
    "qagen",
    "retrieval_eval",
    "answer",
    "judge",
    "judge_retrieval",
    "judge_summary",
    "tournament",
    "race",
    "calibrate",
    "report",
)
