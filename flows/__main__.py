"""``python -m flows {pipeline,sweep,deployments} [args]``: one flow module's command line,
from the project root, with the offline environment applied before Prefect is imported."""

from __future__ import annotations

import importlib
import sys

from ragcourt.core.entry import run_entry
from ragcourt.core.errors import RagcourtError
from ragcourt.core.offline import apply as apply_offline

FLOWS = ("pipeline", "race", "sweep", "deployments")


def main() -> None:
    """Dispatch to ``<flow>.main(args)``."""
    if len(sys.argv) < 2 or sys.argv[1] not in FLOWS:
        raise RagcourtError("usage: python -m flows {" + ",".join(FLOWS) + "} [args]")
    apply_offline()  # before prefect is imported
    module = importlib.import_module(f"flows.{sys.argv[1]}")
    module.main(sys.argv[2:])


if __name__ == "__main__":
    run_entry(main)
    sys.exit(0)  # do not wait for Prefect's background threads
