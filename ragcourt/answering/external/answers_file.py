"""``kind: answers_file``: answers written by another process, checked against the QA set.

Formats by suffix: ``.jsonl`` (one JSON object per line; blank lines skipped), ``.csv``
(header row; ``contexts`` cell = a JSON array; a cell quoted against spreadsheet formulas,
as ``ragcourt questions export --format csv`` writes them, is read back unquoted by
:func:`ragcourt.core.spreadsheet.from_cell`), ``.parquet`` (``contexts`` = list of strings
or of structs). Text files are UTF-8 (a byte-order mark, as spreadsheets write, is allowed).
Columns:

====================  ==========================================================
``question_id``       required; a QA question id (an integer in JSON is read as text)
``answer``            required; a non-empty string (abstain with ``NO-RESPONSE``)
``contexts``          optional; passages (see :mod:`ragcourt.answering.external.replies`)
``latency_s``         optional; seconds >= 0
``cost_usd``          optional; dollars >= 0
``question``          optional; when present it must equal the QA question text
====================  ==========================================================

Any other column, an unknown ``question_id``, a duplicate ``question_id``, a missing or empty
answer, or a malformed value is a :class:`~ragcourt.core.errors.SchemaError` naming the file,
the row (``line N`` for JSONL, ``row N`` = N-th data row otherwise) and the column; the file
is rejected whole. A QA question the file does not answer is not an error of the file: it
becomes an error row of the system (never a silent drop).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from ragcourt.answering.external.bounds import bound_reply, log_dropped
from ragcourt.answering.external.replies import Reply, ReplyError, opt_number, passages_from
from ragcourt.answering.external.routes import ANSWER_ROUTES, AnswerRoute
from ragcourt.answering.external.rows import answer_row, error_row, rows_frame
from ragcourt.answering.external.specs import ANSWERS_FILE_SUFFIXES
from ragcourt.core.errors import ConfigError, SchemaError
from ragcourt.core.params import LimitsParams
from ragcourt.core.spreadsheet import from_cell
from ragcourt.core.user_files import decode_user_text
from ragcourt.core.user_json import JsonTooDeep, loads_user_json

COLUMNS = ("question_id", "answer", "contexts", "latency_s", "cost_usd", "question")
REQUIRED = ("question_id", "answer")


@dataclass(frozen=True)
class AnswersFile:
    """A checked answers file: ``replies`` by question id (file order), ``unanswered`` = QA
    question ids the file has no row for (QA order)."""

    path: Path
    replies: dict[str, Reply]
    unanswered: list[str]


# a CSV cell may hold every passage of an answer: limits.contexts_max x context_max_chars at
# their largest, plus JSON quoting (Python's default is 131,072 characters)
CSV_FIELD_LIMIT = 2**31 - 1


def read_text_file(path: Path, encoding: str | None = None) -> str:
    """The text of a JSONL/CSV answers file: ``encoding`` as declared, else by byte-order mark,
    else UTF-8 (:func:`ragcourt.core.user_files.decode_user_text`)."""
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise SchemaError(f"{path}: cannot be read ({err.strerror or err})") from None
    try:
        return decode_user_text(raw, str(path), encoding)
    except ConfigError as err:
        raise SchemaError(str(err)) from None


def _records(path: Path, encoding: str | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
    """(row label, raw record) in file order; the file's shape errors name the row."""
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        text = read_text_file(path, encoding)
        for n, line in enumerate(text.split("\n"), start=1):  # not splitlines: U+2028 is data
            if not line.strip():
                continue
            try:
                obj = loads_user_json(line)
            except ValueError as err:
                raise SchemaError(f"{path}: line {n}: not valid JSON ({err})") from None
            if not isinstance(obj, dict):
                raise SchemaError(f"{path}: line {n}: expected a JSON object")
            yield f"line {n}", obj
    elif suffix == ".csv":
        csv.field_size_limit(CSV_FIELD_LIMIT)
        reader = csv.DictReader(io.StringIO(read_text_file(path, encoding), newline=""))
        try:
            _check_columns(path, reader.fieldnames or [])
            for n, rec in enumerate(reader, start=1):
                yield f"row {n}", _csv_record(path, f"row {n}", rec)
        except csv.Error as err:
            raise SchemaError(f"{path}: row {reader.line_num}: not valid CSV ({err})") from None
    elif suffix == ".parquet":
        try:
            df = pl.read_parquet(path)
        except Exception as err:  # polars raises several types for corrupt files
            raise SchemaError(f"{path}: not a readable Parquet file ({err})") from None
        _check_columns(path, df.columns)
        for n, rec in enumerate(df.iter_rows(named=True), start=1):
            yield f"row {n}", rec
    else:
        raise SchemaError(f"{path}: answers file must end in {', '.join(ANSWERS_FILE_SUFFIXES)}")


def _check_columns(path: Path, columns: Sequence[str], where: str = "") -> None:
    unknown = [c for c in columns if c not in COLUMNS]
    if unknown:
        raise SchemaError(
            f"{path}: {where}unknown column '{unknown[0]}' (columns: {', '.join(COLUMNS)})"
        )
    for col in REQUIRED:
        if col not in columns:
            raise SchemaError(f"{path}: {where}missing column '{col}'")


def _csv_record(path: Path, where: str, rec: dict[str, Any]) -> dict[str, Any]:
    """CSV cells are text (formula quoting undone): empty optional cells are null, numbers and
    contexts are parsed."""
    out: dict[str, Any] = {
        k: (from_cell(v) if v != "" else None) for k, v in rec.items() if k is not None
    }
    if None in rec:
        raise SchemaError(f"{path}: {where}: more cells than header columns")
    for col in ("latency_s", "cost_usd"):
        if out.get(col) is not None:
            try:
                out[col] = float(out[col])
            except ValueError:
                raise SchemaError(
                    f"{path}: {where}: column '{col}': '{out[col]}' is not a number"
                ) from None
    if out.get("contexts") is not None:
        try:
            out["contexts"] = loads_user_json(out["contexts"])
        except JsonTooDeep as err:
            raise SchemaError(f"{path}: {where}: column 'contexts': {err}") from None
        except ValueError:
            raise SchemaError(
                f"{path}: {where}: column 'contexts': a CSV cell must hold a JSON array of "
                'passages, e.g. ["first passage", "second passage"]'
            ) from None
    return out


def _question_id(value: Any) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    return value if isinstance(value, str) and value else None


def read_answers_file(
    path: Path | str, qa: pl.DataFrame, encoding: str | None = None
) -> AnswersFile:
    """Check every row of ``path`` against the QA set (rules in the module docstring); a text
    file is read in ``encoding`` (None: by its byte-order mark, else UTF-8)."""
    path = Path(path)
    if not path.is_file():
        raise SchemaError(f"{path}: answers file not found")
    questions = dict(zip(qa["question_id"].to_list(), qa["question"].to_list(), strict=True))
    replies: dict[str, Reply] = {}
    first_seen: dict[str, str] = {}
    for where, rec in _records(path, encoding):
        if path.suffix.lower() == ".jsonl":
            _check_columns(path, list(rec), f"{where}: ")

        def bad(col: str, msg: str, where: str = where) -> SchemaError:
            return SchemaError(f"{path}: {where}: column '{col}': {msg}")

        qid = _question_id(rec.get("question_id"))
        if qid is None:
            raise bad("question_id", "missing or not a non-empty string")
        if qid not in questions:
            raise bad("question_id", f"'{qid}' is not a question of the QA set")
        if qid in first_seen:
            raise bad("question_id", f"duplicate '{qid}' (first at {first_seen[qid]})")
        first_seen[qid] = where
        if "question" in rec and rec["question"] is not None and rec["question"] != questions[qid]:
            raise bad("question", f"differs from the QA set's text of '{qid}' (QA set changed?)")
        answer = rec.get("answer")
        if answer is None:
            raise bad("answer", f"missing for '{qid}' (leave the row out to mark it unanswered)")
        if not isinstance(answer, str) or not answer.strip():
            raise bad("answer", f"must be a non-empty string for '{qid}'")
        try:
            replies[qid] = Reply(
                answer=answer,
                contexts=passages_from(rec.get("contexts"), "contexts"),
                latency_s=opt_number(rec.get("latency_s"), "latency_s", minimum=0),
                cost_usd=opt_number(rec.get("cost_usd"), "cost_usd", minimum=0),
            )
        except ReplyError as err:
            raise SchemaError(f"{path}: {where}: {err}") from None
    unanswered = [q for q in questions if q not in replies]
    return AnswersFile(path, replies, unanswered)


def answer_from_file(
    name: str,
    model: str,
    path: Path | str,
    qa: pl.DataFrame,
    limits: LimitsParams | None = None,
) -> pl.DataFrame:
    """Rows of table ``answers`` for an answers-file system (file checked first; an answer or
    passage over ``limits`` is an error row of its question, :mod:`~.bounds`)."""
    checked = read_answers_file(path, qa)
    bounds = limits or LimitsParams()
    rows, kept = [], []
    for qid in qa["question_id"].to_list():
        reply = checked.replies.get(qid)
        if reply is None:
            rows.append(error_row(name, model, qid, f"no answer for this question in {path}"))
            continue
        try:
            reply = bound_reply(reply, bounds)
        except ReplyError as err:
            rows.append(error_row(name, model, qid, f"{path}: {err}", reply.latency_s))
            continue
        kept.append(reply)
        rows.append(answer_row(name, model, qid, reply, reply.latency_s))
    log_dropped(name, kept)
    return rows_frame(rows)


ANSWER_ROUTES.register("answers_file")(
    AnswerRoute(
        lambda name, model, spec, qa, previous, limits: answer_from_file(
            name, model, spec.path, qa, limits
        ),
        lambda spec: str(spec.path),
        reads_whole_set=True,
    )
)
