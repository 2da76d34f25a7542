"""What every thin ``python -m stages.<name>`` entry shares: argument parsing, the offline
environment, logging, and one-line errors.

``run_entry(main)`` applies the offline environment (:func:`ragcourt.core.offline.apply`),
sets up logging, calls ``main()`` inside :func:`ragcourt.core.io.output_set` (a stage's
outputs are renamed into place together, or not at all) and turns a :class:`RagcourtError`
into one line on stderr and exit code 2. :class:`StageFailed` (outputs written, error rows
included, but too many model calls failed: see :mod:`ragcourt.core.failures`) exits 3.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable

from ragcourt.core.errors import RagcourtError, StageFailed
from ragcourt.core.io import output_set
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
    """Run a stage's main as one output set; RagcourtError -> 'ragcourt: error: <msg>' and
    exit 2; StageFailed -> 'ragcourt: stage failed: <msg>' and exit 3."""
    apply_offline()
    setup_logging()
    try:
        with output_set():
            main()
    except StageFailed as err:
        print(f"ragcourt: stage failed: {err}", file=sys.stderr)
        sys.exit(3)
    except RagcourtError as err:
        print(f"ragcourt: error: {err}", file=sys.stderr)
        sys.exit(2)
