"""What every thin ``python -m stages.<name>`` entry shares: argument parsing, the offline
environment, logging, and one-line errors.

``run_entry(main)`` applies the offline environment (:func:`ragcourt.core.offline.apply`),
sets up logging, calls ``main()`` and turns a :class:`RagcourtError` into one line on stderr
and exit code 2 (nothing half-written: stages write atomically and only at the end).
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable

from ragcourt.core.errors import RagcourtError
from ragcourt.core.offline import apply as apply_offline
from ragcourt.core.params import DEFAULT_PARAMS_PATH

log = logging.getLogger("ragcourt")


def setup_logging() -> None:
    """Plain one-line log records on stderr (idempotent)."""
    if not logging.getLogger().handlers:
        logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")


def stage_parser(doc: str | None) -> argparse.ArgumentParser:
    """An argument parser with ``--params`` whose description is the first line of ``doc``."""
    ap = argparse.ArgumentParser(description=(doc or "").strip().splitlines()[0] if doc else None)
    ap.add_argument("--params", default=str(DEFAULT_PARAMS_PATH), help="params file")
    return ap


def run_entry(main: Callable[[], object]) -> None:
    """Run a stage's main; RagcourtError -> 'ragcourt: error: <msg>' and exit 2."""
    apply_offline()
    setup_logging()
    try:
        main()
    except RagcourtError as err:
        print(f"ragcourt: error: {err}", file=sys.stderr)
        sys.exit(2)
