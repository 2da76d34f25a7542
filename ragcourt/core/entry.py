"""What every command-line entry shares (the generic stage entry ``python -m
stages <name>``, the flows' ``__main__``): the offline environment, logging, the
``$DVC_STAGE`` partition, and one-line errors.

``run_entry(main)`` applies the offline environment (:func:`ragcourt.core.offline.apply`)
and the malloc settings (:func:`ragcourt.core.allocator.bound_heap`), sets up logging, calls
``main()`` inside :func:`ragcourt.core.io.output_set` (a stage's outputs are renamed into
place together, or not at all) and turns a :class:`RagcourtError` into one line on stderr
(:func:`ragcourt.core.errors.error_line`: a newline in a user value is shown as ``\\n``) and
exit code 2. :class:`StageFailed` (outputs written, error rows included, but too many model
calls failed: see :mod:`ragcourt.core.failures`) exits 3.
"""

from __future__ import annotations

import itertools
import logging
import os
import sys
from collections.abc import Callable, Collection

from ragcourt.core.allocator import bound_heap
from ragcourt.core.errors import RagcourtError, StageFailed, error_line
from ragcourt.core.io import output_set
from ragcourt.core.offline import apply as apply_offline
from ragcourt.core.redact import install_log_redaction

log = logging.getLogger("ragcourt")


def setup_logging() -> None:
    """Plain one-line log records on stderr, URLs redacted and request-URL loggers at WARNING
    (:func:`~ragcourt.core.redact.install_log_redaction`); idempotent."""
    install_log_redaction()
    if not logging.getLogger().handlers:
        logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")


DVC_STAGE = "DVC_STAGE"  # set by DVC for every stage command: its address, e.g. "embed@c256-minilm"


def dvc_partition(stage: str, axes: dict[str, Collection[str]]) -> dict[str, str]:
    """The partition of a DVC foreach/matrix stage, read from ``$DVC_STAGE`` so no params key
    ever reaches a shell command line.

    ``axes`` maps each partition field to its configured keys (``{"chunking": chunkings}``);
    the address is ``<stage>@<key>`` for one field and ``<stage>@<k1>-<k2>`` for a matrix
    (DVC joins the values with "-"): the one combination of configured keys that spells it.
    """
    address = os.environ.get(DVC_STAGE, "")
    name, _, suffix = address.partition("@")
    if name != stage or not suffix:
        fields = " ".join(f"--{f}" for f in axes)
        raise RagcourtError(
            f"stage {stage}: give {fields} (or run it through dvc repro, which sets {DVC_STAGE})"
        )
    combos = [dict(zip(axes, keys, strict=True)) for keys in itertools.product(*axes.values())]
    found = [c for c in combos if "-".join(c.values()) == suffix]
    if len(found) != 1:
        what = "no" if not found else "more than one"
        raise RagcourtError(
            f"{DVC_STAGE}={address!r}: {what} configured combination of "
            f"{'/'.join(axes)} spells {suffix!r} (keys in params: "
            + "; ".join(f"{f}: {sorted(v)}" for f, v in axes.items())
            + ")"
        )
    return found[0]


#: set by ``ragcourt run`` for ``dvc repro``: a stage that exits non-zero writes its code there
EXIT_CODE_FILE = "RAGCOURT_EXIT_CODE_FILE"


def record_exit_code(code: int) -> None:
    """Write ``code`` to the file ``$RAGCOURT_EXIT_CODE_FILE`` names, if set (DVC reports any
    failing stage as 255; ``ragcourt run`` exits with the stage's own code)."""
    target = os.environ.get(EXIT_CODE_FILE)
    if target:
        try:
            with open(target, "a", encoding="utf-8") as f:
                f.write(f"{code}\n")
        except OSError:
            pass  # the code still reaches DVC; only the CLI's report loses it


def run_entry(main: Callable[[], object]) -> None:
    """Run a stage's main as one output set; RagcourtError -> 'ragcourt: error: <msg>' and
    exit 2; StageFailed -> 'ragcourt: stage failed: <msg>' and exit 3 (the code also goes to
    :func:`record_exit_code`)."""
    apply_offline()
    bound_heap()
    setup_logging()
    try:
        with output_set():
            main()
    except StageFailed as err:
        print(error_line("ragcourt: stage failed:", err), file=sys.stderr, flush=True)
        record_exit_code(3)
        sys.exit(3)
    except RagcourtError as err:
        print(error_line("ragcourt: error:", err), file=sys.stderr, flush=True)
        record_exit_code(2)
        sys.exit(2)
