"""Parquet table schemas: the shared dtypes and the checks; each table is declared by the
package whose stage writes it (``ragcourt/<package>/tables.py``, ``TABLES`` and optionally
``OPTIONAL_COLUMNS``), and found here by name.

Each table is a mapping column -> polars dtype. ``check`` verifies a frame has every column
with the declared dtype (extra columns are allowed) and raises SchemaError naming the file
and column. ``ARRAY_F32`` marks a fixed-size float32 array column of any width.
``frame_schema`` gives a table's dtypes typed for ``pl.DataFrame(schema=...)``. The tables
modules are imported on the first lookup by name; a stage's code deps count the tables module
of every package its code imports (:mod:`ragcourt.orchestration.code_deps`).
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

import polars as pl

from ragcourt.core.errors import ConfigError, SchemaError

ARRAY_F32 = "Array[Float32]"  # sentinel: fixed-size float32 array, width checked elsewhere

PolarsDtype = pl.DataType | type[pl.DataType]
Columns = dict[str, PolarsDtype | str]  # one table: column -> dtype (or ARRAY_F32)
_V = TypeVar("_V")

RETRIEVED = pl.Struct(
    {
        "chunk_id": pl.String,
        "rank": pl.Int32,
        "score": pl.Float64,
        "doc_id": pl.String,
        "char_start": pl.Int64,
        "char_end": pl.Int64,
        "text": pl.String,
    }
)


@functools.cache
def _declared(attr: str) -> dict[str, Any]:
    """``attr`` (``TABLES`` or ``OPTIONAL_COLUMNS``) of every ``ragcourt.<package>.tables``
    module, merged; a table declared by two packages is a ConfigError."""
    package = Path(__file__).resolve().parents[1]
    out: dict[str, Any] = {}
    for folder in sorted(package.iterdir()):
        if not (folder / "tables.py").is_file():
            continue
        module = importlib.import_module(f"{package.name}.{folder.name}.tables")
        for name, columns in getattr(module, attr, {}).items():
            if name in out:
                raise ConfigError(f"table schema '{name}' is declared twice ({module.__name__})")
            out[name] = columns
    return out


class _Declared(Mapping[str, _V]):
    """A read-only view of :func:`_declared` ``(attr)``, loaded on first use."""

    def __init__(self, attr: str) -> None:
        self._attr = attr

    def __getitem__(self, name: str) -> _V:
        value: _V = _declared(self._attr)[name]
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(_declared(self._attr))

    def __len__(self) -> int:
        return len(_declared(self._attr))


#: every built-in table, by name
TABLES: Mapping[str, Columns] = _Declared("TABLES")
#: columns a table may have: dtype-checked when present, absent from tables written before
#: they existed or built by hand (tests, plug-ins)
OPTIONAL_COLUMNS: Mapping[str, dict[str, PolarsDtype]] = _Declared("OPTIONAL_COLUMNS")


def _dtype_ok(actual: pl.DataType, expected: PolarsDtype | str) -> bool:
    if expected == ARRAY_F32:
        return isinstance(actual, pl.Array) and actual.inner == pl.Float32
    return actual == expected


#: the table schemas of a project's own stages, by project root (see :func:`register_table`)
_PROJECT_TABLES: dict[Path, dict[str, Columns]] = {}


def register_table(root: Path, name: str, columns: Columns) -> None:
    """Add the schema of a table a project's own stage writes (its ``StageDef.tables``) for
    the project at ``root``; a name already used by another schema is a ConfigError."""
    own = _PROJECT_TABLES.setdefault(root.resolve(), {})
    known = TABLES.get(name) or own.get(name)
    if known is not None and known != columns:
        raise ConfigError(f"table schema '{name}' is already defined differently")
    own[name] = dict(columns)


def _columns(table: str) -> Columns:
    """A built-in table's schema, or one of the working directory's project (SchemaError)."""
    found = TABLES.get(table) or _PROJECT_TABLES.get(Path.cwd().resolve(), {}).get(table)
    if found is None:
        raise SchemaError(f"unknown table schema '{table}'")
    return found


def check(df: pl.DataFrame, table: str, source: Path | str) -> pl.DataFrame:
    """Raise SchemaError if ``df`` lacks a column of ``table`` or has a wrong dtype (an
    optional column is checked when present)."""
    optional = OPTIONAL_COLUMNS.get(table, {})
    for col, expected in {**_columns(table), **optional}.items():
        if col not in df.columns:
            if col in optional:
                continue
            raise SchemaError(f"{source}: missing column '{col}' (table '{table}')")
        actual = df.schema[col]
        if not _dtype_ok(actual, expected):
            raise SchemaError(
                f"{source}: column '{col}' has dtype {actual}, expected {expected} "
                f"(table '{table}')"
            )
    return df


def frame_schema(table: str) -> dict[str, PolarsDtype]:
    """``TABLES[table]`` as a polars schema (the same dtype objects, in order); SchemaError for
    a table with an ``ARRAY_F32`` column, whose width is not declared."""
    out: dict[str, PolarsDtype] = {}
    for col, dtype in _columns(table).items():
        if isinstance(dtype, str):
            raise SchemaError(f"table '{table}': column '{col}' has no fixed dtype ({dtype})")
        out[col] = dtype
    return out


def empty(table: str) -> pl.DataFrame:
    """An empty frame with ``table``'s declared columns (array columns become Float32 lists)."""
    cols: dict[str, PolarsDtype] = {
        c: pl.Array(pl.Float32, 1) if isinstance(t, str) else t for c, t in _columns(table).items()
    }
    return pl.DataFrame(schema=cols)


def check_one_row_per_answer(table: pl.DataFrame, where: str, what: str) -> None:
    """SchemaError ``<where>: duplicate <what> for system 's', question 'q'`` naming the first
    (system, question_id) of ``table`` that has more than one row."""
    dup = table.filter(pl.struct("system", "question_id").is_duplicated())
    if dup.height:
        row = dup.row(0, named=True)
        raise SchemaError(
            f"{where}: duplicate {what} for system '{row['system']}', question "
            f"'{row['question_id']}'"
        )
