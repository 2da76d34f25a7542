"""In-process progress events of a flow run (the CLI draws them as a rich progress bar).

The pipeline flow calls :func:`emit` as each stage task finishes (completed, cached or failed);
:func:`listening` registers a callback for the duration of a ``with`` block. Events stay in the
flow's own process, so this works with every task runner and never reaches the Prefect API.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass


@dataclass(frozen=True)
class StageEvent:
    """``kind``: ``plan`` (``total`` calls ahead), ``done`` (one call ended in ``state``)."""

    kind: str
    call: str = ""
    state: str = ""
    total: int = 0


Listener = Callable[[StageEvent], None]
_listeners: list[Listener] = []
_lock = threading.Lock()


def emit(event: StageEvent) -> None:
    with _lock:
        current = list(_listeners)
    for fn in current:
        fn(event)


@contextmanager
def listening(fn: Listener) -> Iterator[None]:
    with _lock:
        _listeners.append(fn)
    try:
        yield
    finally:
        with _lock:
            _listeners.remove(fn)
