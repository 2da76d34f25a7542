"""Prefect flows of the ragcourt pipeline (not an installed package: run from the project root).

``flows.pipeline`` (flow ``ragcourt-pipeline``) calls the same library functions DVC runs
through ``python -m stages.<name>`` and writes the same ``data/`` artifacts, so the report and
``dvc push`` work on either engine's results; ``flows.sweep`` fans the pipeline out over a
parameter grid; ``flows.deployments`` serves scheduled deployments. Each engine keeps its own
record of what is up to date: after a Prefect run ``dvc commit -f`` (``--with-deps <stage>``
after ``--until <stage>``) records the outputs in dvc.lock, else DVC re-runs those stages; the
flow's cache trusts only outputs it wrote itself (:mod:`ragcourt.orchestration.caching`).
Each flow module applies the offline environment (:func:`ragcourt.core.offline.apply`)
before it imports Prefect; importing this package does nothing.
"""
