"""Thin ``python -m stages.<name>`` entry helper shared by every stage module.

``run_entry(main)`` calls ``main()`` and turns a RagcourtError into one line on stderr and
exit code 2 (nothing half-written: stages write atomically and only at the end).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable

from stages.errors import RagcourtError

log = logging.getLogger("ragcourt")


def setup_logging() -> None:
    """Plain one-line log records on stderr (idempotent)."""
    if not logging.getLogger().handlers:
        logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")


def run_entry(main: Callable[[], object]) -> None:
    """Run a stage's main; RagcourtError -> 'ragcourt: error: <msg>' and exit 2."""
    setup_logging()
    try:
        main()
    except RagcourtError as err:
        print(f"ragcourt: error: {err}", file=sys.stderr)
        sys.exit(2)
