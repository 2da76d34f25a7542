"""Prefect orchestration of the ragcourt pipeline.

The flows call the same ``stages.<name>.run`` functions DVC runs (``python -m stages.<name>``)
and write the same ``data/`` artifacts, so a run made by either engine is read by the other.
Importing this package applies the offline environment defaults first (via ``stages``).
"""

import stages as _stages  # noqa: F401  (side effect: offline env before prefect is imported)

__all__: list[str] = []
