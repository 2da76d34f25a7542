"""Prefect orchestration of the ragcourt pipeline.

The flows call the same ``stages.<name>.run`` functions DVC runs (``python -m stages.<name>``)
and write the same ``data/`` artifacts, so the report and ``dvc push`` work on either engine's
results. Each engine keeps its own record of what is up to date: after a Prefect run
``dvc commit -f`` (``--with-deps <stage>`` after ``--until <stage>``) records the outputs in
dvc.lock, else DVC re-runs those stages; the flow's cache trusts only outputs it wrote itself
(:mod:`flows.caching`), so it runs a stage once more after DVC rewrote its outputs.
Importing this package applies the offline environment defaults first (via ``stages``) and
gives Prefect's temporary server (used when no ``PREFECT_API_URL`` is set) 120 s instead of
20 s to start (20 s is not enough on two busy cores), and routes the stages' ``ragcourt.*``
log records to the task logs in the Prefect UI. All are ``setdefault``: users win.
"""

import os

import stages as _stages  # noqa: F401  (side effect: offline env before prefect is imported)

os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")
os.environ.setdefault("PREFECT_LOGGING_EXTRA_LOGGERS", "ragcourt")
os.environ.setdefault("PREFECT_LOGGING_TO_API_WHEN_MISSING_FLOW", "ignore")  # stages run bare too

__all__: list[str] = []
