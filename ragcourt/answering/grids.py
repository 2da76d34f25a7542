"""Grids of the systems file: a product of factors over a base configuration (DICE Table 1
style). A grid expands to the Cartesian product of its factors, in the order written; each
system is named ``<prefix>-<label1>-<label2>...`` (or by the ``name`` template, a
``str.format`` string over the factor labels). Derived labels: strings are used as written (a
model string keeps the part after the last ``/``), ``top_k: 5`` -> ``k5``, ``fusion: false``
-> ``nofusion``, fusion on -> ``fusion<n>``, ``generator: null`` -> ``default``; other values
-> ``<field><value>``.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Mapping
from typing import Any

from ragcourt.answering.system_specs import GridSpec, SystemSpec
from ragcourt.core.errors import ConfigError

_LABEL_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def factor_label(field: str, value: Any) -> str:
    """Readable label of one factor level (rules in the module docstring)."""
    if field == "fusion":
        if value in (False, None):
            return "nofusion"
        n = value.get("n_variants", 4) if isinstance(value, Mapping) else 4
        return f"fusion{n}"
    if value is None:
        return "default"
    if isinstance(value, bool):
        return f"{field}{'on' if value else 'off'}"
    if isinstance(value, str):
        text = value.rsplit("/", 1)[-1]
    elif field == "top_k":
        text = f"k{value}"
    else:
        text = f"{field}{value}"
    return _LABEL_UNSAFE.sub("_", text).strip("_") or field


def _factor_levels(where: str, field: str, levels: Any) -> list[tuple[str, Any]]:
    if isinstance(levels, Mapping):
        pairs = [(str(label), value) for label, value in levels.items()]
    elif isinstance(levels, list):
        pairs = [(factor_label(field, value), value) for value in levels]
    else:
        raise ConfigError(f"{where}: factor '{field}' must be a list or a label -> value mapping")
    if not pairs:
        raise ConfigError(f"{where}: factor '{field}' has no levels")
    labels = [label for label, _ in pairs]
    dup = sorted({lab for lab in labels if labels.count(lab) > 1})
    if dup:
        raise ConfigError(
            f"{where}: factor '{field}' has levels with the same label {dup}; "
            "give explicit labels with the mapping form {label: value}"
        )
    return pairs


def expand_grid(
    grid: GridSpec, defaults: Mapping[str, Any], where: str, max_systems: int | None = None
) -> list[dict[str, Any]]:
    """The raw system dicts of a grid: base merged with one level of every factor. A product
    of levels over ``max_systems`` is one line naming it and ``limits.max_systems`` (checked
    before anything is expanded)."""
    known = set(SystemSpec.model_fields) - {"name"}
    if not grid.factors:
        raise ConfigError(f"{where}: a grid needs at least one factor")
    for field in grid.factors:
        if field not in known:
            raise ConfigError(f"{where}: unknown factor '{field}' (system fields: {sorted(known)})")
    if "name" in grid.base:
        raise ConfigError(f"{where}: 'base' may not set a name (names come from the factors)")
    fields = list(grid.factors)
    level_lists = [_factor_levels(where, f, grid.factors[f]) for f in fields]
    product = math.prod(len(levels) for levels in level_lists)
    if max_systems is not None and product > max_systems:
        sizes = " x ".join(f"{f} {len(lv)}" for f, lv in zip(fields, level_lists, strict=True))
        raise ConfigError(
            f"{where}: the grid expands to {product:,} systems ({sizes}), over "
            f"limits.max_systems ({max_systems:,}); raise limits.max_systems in params.yaml "
            "or use fewer levels"
        )
    out: list[dict[str, Any]] = []
    for combo in itertools.product(*level_lists):
        labels = {f: label for f, (label, _) in zip(fields, combo, strict=True)}
        if grid.name is not None:
            try:
                name = grid.name.format(**labels)
            except (KeyError, IndexError, ValueError) as err:
                raise ConfigError(
                    f"{where}: name template '{grid.name}' refers to {err}, "
                    f"not one of the factors {fields}"
                ) from None
        else:
            name = "-".join([*([grid.prefix] if grid.prefix else []), *labels.values()])
        raw = {**defaults, **grid.base, "name": name}
        raw.update({f: value for f, (_, value) in zip(fields, combo, strict=True)})
        out.append(raw)
    return out
