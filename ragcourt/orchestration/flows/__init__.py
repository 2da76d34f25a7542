"""Prefect flows of the ragcourt pipeline.

:mod:`~ragcourt.orchestration.flows.pipeline` (flow ``ragcourt-pipeline``) calls the same stage
functions DVC runs through ``python -m stages <name>`` and writes the same ``data/``
artifacts, so the report and ``dvc push`` work on either engine's results;
:mod:`~ragcourt.orchestration.flows.sweep` fans the pipeline out over a parameter grid;
:mod:`~ragcourt.orchestration.flows.deployments` serves scheduled deployments. Each engine keeps
its own record of what is up to date: after a Prefect run ``dvc commit -f`` (``--with-deps
<stage>`` after ``--until <stage>``) records the outputs in dvc.lock, else DVC re-runs those
stages; the flow's cache trusts only outputs it wrote itself
(:mod:`ragcourt.orchestration.caching`).

Run one from the command line with ``python -m ragcourt.orchestration.flows <flow> [args]``
(:mod:`~ragcourt.orchestration.flows.__main__`), which applies the offline environment before
Prefect is imported; importing these modules changes no environment variable.
"""
