"""The Prefect flows of this project, where ``prefect deploy`` looks for them.

:mod:`flows.pipeline` (flow ``ragcourt-pipeline``, entrypoint
``flows/pipeline.py:pipeline``) calls the same stage functions DVC runs through
``python -m stages <name>`` and writes the same ``data/`` artifacts, so the report and
``dvc push`` work on either engine's results; :mod:`flows.sweep` (``flows/sweep.py:sweep``)
fans the pipeline out over a parameter grid; :mod:`flows.deployments` serves scheduled
deployments. The tasks they run live in the library (:mod:`ragcourt.orchestration`), so Dask
workers import them by name. Each engine keeps its own record of what is up to date: after a
Prefect run ``dvc commit -f`` (``--with-deps <stage>`` after ``--until <stage>``) records the
outputs in dvc.lock, else DVC re-runs those stages; the flow's cache trusts only outputs it
wrote itself (:mod:`ragcourt.orchestration.caching`).

Run one from the project root with ``python -m flows <flow> [args]``
(:mod:`flows.__main__`), which applies the offline environment before Prefect is imported;
importing these modules changes no environment variable. ``ragcourt run --engine prefect``,
``ragcourt sweep`` and ``ragcourt serve`` import them from the project (or, when it has no
``flows/``, from the checkout ragcourt runs from).
"""
