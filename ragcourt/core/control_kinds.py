"""Which systems are controls, and which pairs of systems have a known order.

``answers.parquet`` has a ``control`` column (:data:`CONTROL_COLUMN`): ``oracle``, ``random``,
``none`` (closed book) or ``shuffled``; null for a real system (a table written before controls
existed has no column: every system is real). Known orders (:func:`known_pairs`), better
first: oracle > random, oracle > none, and the oracle and every real system > shuffled. A
random-passage or closed-book answer is not known to beat another question's answer (both are
expected to be wrong), so those pairs are not checked. Pairs of two controls test the judges;
a real system against shuffled answers tests the system (is it better than answering another
question?).

Shared vocabulary of the answer, judging, tournament and report stages (only polars is
imported).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import polars as pl

CONTROL_COLUMN = "control"
NO_CONTROLS = "no controls: validity not checked"
KNOWN_ORDERS: tuple[tuple[str, str], ...] = (("oracle", "random"), ("oracle", "none"))


def is_control_pair(better_control: str | None, worse_control: str | None) -> bool:
    """True for a known pair of two controls (it tests the judges, not a real system)."""
    return better_control is not None and worse_control is not None


def controls_of(answers: pl.DataFrame) -> dict[str, str]:
    """``{system: control kind}`` of the control systems in ``answers`` (first row wins)."""
    if CONTROL_COLUMN not in answers.columns:
        return {}
    per = answers.group_by("system", maintain_order=True).agg(pl.col(CONTROL_COLUMN).first())
    return {s: k for s, k in per.iter_rows() if k is not None}


def known_pairs(systems: Sequence[str], controls: Mapping[str, str]) -> list[tuple[str, str]]:
    """(better, worse) pairs whose order is known, in ``systems`` order: every oracle before
    every random / none control, every oracle and real system before every shuffled control."""
    of_kind = {k: [s for s in systems if controls.get(s) == k] for k in set(controls.values())}
    pairs = [
        (good, bad)
        for hi, lo in KNOWN_ORDERS
        for good in of_kind.get(hi, [])
        for bad in of_kind.get(lo, [])
    ]
    for bad in of_kind.get("shuffled", []):
        pairs += [(good, bad) for good in systems if controls.get(good) in (None, "oracle")]
    return pairs
