"""Parquet tables read and written batch by batch, so a stage's memory holds one batch.

:func:`read_batches` checks the file's schema against its table (from the footer, as
:func:`ragcourt.core.io.read_table` does) and yields consecutive frames of at most ``size``
rows; :class:`BatchWriter` appends frames to a file as row groups (zstd), each checked against
the table. Rows and values are those of a whole-frame write; only the row-group layout differs.
Write to a temp path (:func:`ragcourt.core.io.write_with`) so the target appears atomically.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

import polars as pl

from ragcourt.core.errors import RagcourtError
from ragcourt.core.schemas import check


def read_batches(
    path: Path | str, table: str, size: int, columns: list[str] | None = None
) -> Iterator[pl.DataFrame]:
    """Frames of at most ``size`` rows of the Parquet file ``path`` (table ``table``), in
    order, fetched row group by row group (memory holds a batch and its groups, not the
    file); a missing file or column is a one-line error naming the file."""
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    path = Path(path)
    if not path.is_file():
        raise RagcourtError(f"{path}: input artifact not found (run the stage that makes it)")
    try:
        check(pl.DataFrame(schema=pl.read_parquet_schema(path)), table, path)
        # pre_buffer (pyarrow's default) fetches every row group of the read before the first
        # batch: memory would hold the whole file.
        reader = pq.ParquetFile(path, pre_buffer=False)
        batches = reader.iter_batches(batch_size=size, columns=columns)
    except RagcourtError:
        raise
    except Exception as err:  # pyarrow raises several types for corrupt files
        raise RagcourtError(f"{path}: not a readable Parquet file ({err})") from None
    for rb in batches:
        frame = pl.from_arrow(rb)
        assert isinstance(frame, pl.DataFrame)
        yield frame


class BatchWriter:
    """Append frames of table ``table`` to the Parquet file ``path`` (one row group each);
    ``metadata`` (key -> text, filled in while writing) goes into the file's footer."""

    def __init__(self, path: Path | str, table: str) -> None:
        self.path = Path(path)
        self.table = table
        self.rows = 0
        self.metadata: dict[str, str] = {}
        self._writer: Any = None

    def write(self, frame: pl.DataFrame) -> None:
        import pyarrow.parquet as pq

        check(frame, self.table, self.path)
        arrow = frame.to_arrow(compat_level=pl.CompatLevel.oldest())
        if self._writer is None:
            self._writer = pq.ParquetWriter(self.path, arrow.schema, compression="zstd")
        else:
            arrow = arrow.cast(self._writer.schema)
        self._writer.write_table(arrow)
        self.rows += frame.height

    def write_empty(self, schema: dict[str, Any]) -> None:
        """Write the table's columns with no rows, if nothing was written yet."""
        if self._writer is None:
            self.write(pl.DataFrame(schema=schema))

    def close(self) -> None:
        if self._writer is not None:
            if self.metadata:
                self._writer.add_key_value_metadata(self.metadata)
            self._writer.close()
            self._writer = None

    def __enter__(self) -> BatchWriter:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
