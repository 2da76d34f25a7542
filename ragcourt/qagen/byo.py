"""Bring-your-own QA file (``qagen.qa_file``): read, validated, turned into a ``qa`` table.

The file (.parquet, .jsonl or .json) replaces generation; every error names file, row and
column. Provenance columns of the ``qa`` table are null and ``origin`` is 'byo'.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from ragcourt.core import catalog
from ragcourt.core.errors import SchemaError
from ragcourt.core.schemas import PolarsDtype, frame_schema
from ragcourt.core.user_json import loads_user_json

DOCUMENTS_PATH = catalog.path("documents")

BYO_REQUIRED = ("question_id", "question", "reference_answers", "doc_id", "char_start", "char_end")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _check_jsonl_lines(path: Path) -> None:
    """One-line error naming the row for a JSONL line that is not strict JSON (NaN/Infinity,
    which Python's json module would accept, a truncated line, ...)."""
    with path.open(encoding="utf-8") as fh:
        for i, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                loads_user_json(line, parse_constant=_reject_constant)
            except ValueError as err:
                raise SchemaError(f"{path}: row {i}: not valid JSON ({err})") from None


def _read_any(path: Path) -> pl.DataFrame:
    if path.suffix == ".jsonl":
        _check_jsonl_lines(path)
    if path.suffix == ".json":  # nesting checked before polars' parser sees it
        try:
            loads_user_json(path.read_text(encoding="utf-8"), parse_constant=_reject_constant)
        except ValueError as err:
            raise SchemaError(f"{path}: not valid JSON ({err})") from None
    try:
        if path.suffix == ".parquet":
            return pl.read_parquet(path)
        if path.suffix == ".jsonl":
            return pl.read_ndjson(path)
        if path.suffix == ".json":
            return pl.read_json(path)
    except Exception as err:  # polars raises several types for malformed files
        raise SchemaError(f"{path}: cannot read bring-your-own QA file ({err})") from None
    raise SchemaError(f"{path}: bring-your-own QA file must be .parquet, .jsonl or .json")


_BYO_DTYPES: dict[str, PolarsDtype] = {
    "question_id": pl.String, "question": pl.String, "doc_id": pl.String,
    "char_start": pl.Int64, "char_end": pl.Int64, "reference_answers": pl.List(pl.String),
}  # fmt: skip


def _typed_columns(path: Path, df: pl.DataFrame) -> pl.DataFrame:
    """The required columns present and cast to their dtypes (a plain-string
    ``reference_answers`` becomes a one-item list; a float offset must be a whole number)."""
    for col in BYO_REQUIRED:
        if col not in df.columns:
            raise SchemaError(f"{path}: missing column '{col}' (bring-your-own QA file)")
    if df.schema["reference_answers"] == pl.String:
        df = df.with_columns(pl.concat_list(pl.col("reference_answers")))
    for col in ("char_start", "char_end"):  # a float offset must be a whole number, not truncated
        if df.schema[col].is_float():
            frac = df.with_row_index("_row", offset=1).filter(
                pl.col(col).is_not_null() & (pl.col(col).is_nan() | (pl.col(col) % 1 != 0))
            )
            if frac.height:
                row = frac.row(0, named=True)
                raise SchemaError(
                    f"{path}: row {row['_row']}: column '{col}': {row[col]} is not a whole "
                    "character offset"
                )
    for col, dtype in _BYO_DTYPES.items():
        try:
            df = df.with_columns(pl.col(col).cast(dtype, strict=True))
        except Exception:
            raise SchemaError(
                f"{path}: column '{col}' has dtype {df.schema[col]}, expected {dtype}"
            ) from None
    return df


def _checked_spans(path: Path, df: pl.DataFrame, documents: pl.DataFrame) -> list[str]:
    """Each row's document slice [char_start:char_end], after checking the row: a unique
    non-empty id, a question, non-empty answers, a known document, a span inside it and any
    ``context`` equal to the slice."""
    texts = dict(zip(documents["doc_id"].to_list(), documents["text"].to_list(), strict=True))
    has_context = "context" in df.columns
    seen: set[str] = set()
    contexts: list[str] = []
    for i, r in enumerate(df.iter_rows(named=True), start=1):
        where = f"{path}: row {i}"

        def bad(col: str, msg: str, where: str = where) -> SchemaError:
            return SchemaError(f"{where}: column '{col}': {msg}")

        qid = r["question_id"]
        if not qid:
            raise bad("question_id", "empty")
        if qid in seen:
            raise bad("question_id", f"duplicate id '{qid}'")
        seen.add(qid)
        if not (r["question"] or "").strip():
            raise bad("question", "empty")
        refs = r["reference_answers"] or []
        if not refs or any(not (a or "").strip() for a in refs):
            raise bad("reference_answers", "needs at least one non-empty answer")
        text = texts.get(r["doc_id"])
        if text is None:
            raise bad("doc_id", f"unknown document '{r['doc_id']}' (not in {DOCUMENTS_PATH})")
        s, e = r["char_start"], r["char_end"]
        for col, value in (("char_start", s), ("char_end", e)):
            if value is None:
                raise bad(col, "missing (null)")
        if not 0 <= s < e <= len(text):
            raise bad("char_start", f"span [{s}:{e}] not inside document of {len(text)} chars")
        span = text[s:e]
        if has_context and r["context"] is not None and r["context"] != span:
            raise bad("context", "differs from the document text at [char_start:char_end]")
        contexts.append(span)
    return contexts


def load_byo_qa(path: Path | str, documents: pl.DataFrame) -> pl.DataFrame:
    """Validate a user's QA file against the qa schema and the documents; return a ``qa`` frame.

    Required: question_id (unique), question, reference_answers (non-empty list of strings, a
    plain string is taken as a one-item list), doc_id (a known document), char_start < char_end
    within the document. ``context`` is optional; when present it must equal the document
    slice. Provenance columns are null, ``origin`` is 'byo'. Errors name file, row, column.
    """
    path = Path(path)
    if not path.is_file():
        raise SchemaError(f"{path}: qagen.qa_file not found")
    df = _typed_columns(path, _read_any(path))
    contexts = _checked_spans(path, df, documents)
    out = df.select(*BYO_REQUIRED).with_columns(
        pl.Series("context", contexts, dtype=pl.String),
        pl.lit("byo").alias("origin"),
    )
    schema = frame_schema("qa")
    missing = [c for c in schema if c not in out.columns]
    out = out.with_columns(pl.lit(None, dtype=schema[c]).alias(c) for c in missing)
    return out.select(list(schema))
