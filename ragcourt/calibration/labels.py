"""Human label records, their append-only JSONL store, and CSV export/import of a sample.

**Records** (one JSON object per line, pydantic-validated, ``kind`` discriminates):

* ``answer``: ``value`` is ``correct`` | ``incorrect`` | ``cant_tell`` for the answer of
  ``system`` to ``question_id``;
* ``passage``: ``value`` is the grade 0 (not) / 1 (somewhat) / 2 (very relevant) of
  ``chunk_id`` for ``question_id``;
* ``undo``: withdraws the labeller's current label of ``item_id``.

Every record names its ``labeler``, ``created_at`` (UTC), ``source`` (web | csv) and the
``content_sha`` of what the person saw (:mod:`ragcourt.calibration.sampling`), so a label of an
answer that has since changed is recognised as stale rather than applied to the new text.

**Effective label** (:func:`effective_labels`): per (labeler, item) the last record in file
order wins; an ``undo`` removes it. Across labellers (:func:`resolve_labels`), an item whose
labellers disagree is ``conflict`` and is not used by the estimates (it is counted).

**Store**: one file per labeller, ``<labels_dir>/<labeler>.jsonl``. Appending never changes the
existing lines: under a lock (a thread lock and ``fcntl.flock`` on the labels folder) the
current bytes plus the new lines are written to a temp file, fsync'ed, renamed onto the
file (``ragcourt.core.io.atomic_path``) and the folder is fsync'ed. A crash leaves the old or
the new file, never a torn line, so a closed browser or a killed server loses at most the item
on screen.

**Loading** is strict: a line that is not a valid record raises
:class:`~ragcourt.core.errors.RagcourtError` naming ``file:line``; nothing is dropped silently.
"""

from __future__ import annotations

import csv
import fcntl
import json
import os
import re
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Literal

import polars as pl
from pydantic import ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from ragcourt.core import catalog
from ragcourt.core.errors import RagcourtError
from ragcourt.core.fixed_model import FixedModel
from ragcourt.core.io import atomic_path, write_with
from ragcourt.core.spreadsheet import from_cell, to_row
from ragcourt.core.user_json import JsonTooDeep, loads_user_json

DEFAULT_LABELS_DIR = Path(catalog.DEFAULT_LABELS_DIR)
DEFAULT_LABELER = "labels"

AnswerValue = Literal["correct", "incorrect", "cant_tell"]
ANSWER_VALUES: tuple[str, ...] = ("correct", "incorrect", "cant_tell")
PASSAGE_VALUES: tuple[int, ...] = (0, 1, 2)
ITEM_ID_RE = r"^[ap]-[0-9a-f]{16}$"
LABELER_RE = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"


def _now() -> datetime:
    return datetime.now(UTC)


class _Record(FixedModel):
    """The fields every label row has; label files are hand-editable, so values are coerced."""

    model_config = ConfigDict(strict=False)

    item_id: str = Field(pattern=ITEM_ID_RE)
    labeler: str = Field(pattern=LABELER_RE)
    created_at: datetime = Field(default_factory=_now)
    source: Literal["web", "csv"] = "web"


class AnswerLabel(_Record):
    """A person's verdict on one system's answer (the system was not shown)."""

    kind: Literal["answer"] = "answer"
    system: str = Field(min_length=1)
    question_id: str = Field(min_length=1)
    content_sha: str = Field(pattern=r"^[0-9a-f]{16}$")
    value: AnswerValue


class PassageLabel(_Record):
    """A person's 0/1/2 relevance grade of one retrieved passage for a question."""

    kind: Literal["passage"] = "passage"
    question_id: str = Field(min_length=1)
    chunk_id: str = Field(min_length=1)
    content_sha: str = Field(pattern=r"^[0-9a-f]{16}$")
    value: Literal[0, 1, 2]

    @field_validator("value", mode="before")
    @classmethod
    def _an_integer(cls, v: object) -> object:
        """Strictly an integer: a JSON ``true`` or ``1.0`` in a hand-edited file is not a grade."""
        if isinstance(v, bool) or not isinstance(v, int):
            raise ValueError(f"a passage grade is the integer 0, 1 or 2, not {type(v).__name__}")
        return v


class UndoRecord(_Record):
    """Withdraws the labeller's current label of ``item_id``."""

    kind: Literal["undo"] = "undo"


LabelRecord = Annotated[AnswerLabel | PassageLabel | UndoRecord, Field(discriminator="kind")]
Label = AnswerLabel | PassageLabel
_ADAPTER: TypeAdapter[AnswerLabel | PassageLabel | UndoRecord] = TypeAdapter(LabelRecord)


def check_labeler(name: str) -> str:
    """``name`` if it is a valid labeller name (it becomes a file name), else a RagcourtError."""
    if not re.fullmatch(LABELER_RE, name):
        raise RagcourtError(
            f"labeler name '{name}' is not allowed: use 1-64 letters, digits, '_', '.', '-'"
        )
    return name


def _short(err: ValidationError) -> str:
    e = err.errors()[0]
    loc = ".".join(str(x) for x in e["loc"]) or "row"
    more = f" (+{len(err.errors()) - 1} more)" if len(err.errors()) > 1 else ""
    return f"{loc}: {e['msg']}{more}"


def parse_line(line: str, where: str) -> AnswerLabel | PassageLabel | UndoRecord:
    """One JSONL line as a record, or a RagcourtError naming ``where`` (``file:line``)."""
    try:
        obj = loads_user_json(line)
    except JsonTooDeep as err:
        raise RagcourtError(f"{where}: invalid label row: {err}") from None
    except json.JSONDecodeError as err:
        raise RagcourtError(f"{where}: invalid label row: not JSON ({err.msg})") from None
    try:
        return _ADAPTER.validate_python(obj)
    except ValidationError as err:
        raise RagcourtError(f"{where}: invalid label row: {_short(err)}") from None


def read_label_file(path: Path) -> list[AnswerLabel | PassageLabel | UndoRecord]:
    """Every record of one JSONL file, in order; any bad line is an error naming file:line."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise RagcourtError(f"{path}: label file is not UTF-8 text") from None
    out: list[AnswerLabel | PassageLabel | UndoRecord] = []
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for i, line in enumerate(lines, start=1):
        if not line.strip():
            raise RagcourtError(f"{path}:{i}: invalid label row: empty line")
        out.append(parse_line(line, f"{path}:{i}"))
    return out


def label_files(labels_dir: Path) -> list[Path]:
    """The label files of ``labels_dir`` (``*.jsonl``, sorted); none if the folder is absent."""
    if not labels_dir.is_dir():
        return []
    return sorted(p for p in labels_dir.glob("*.jsonl") if p.is_file())


def load_labels(labels_dir: Path) -> list[AnswerLabel | PassageLabel | UndoRecord]:
    """All records of all label files of ``labels_dir`` (file by file, line order)."""
    out: list[AnswerLabel | PassageLabel | UndoRecord] = []
    for f in label_files(labels_dir):
        out.extend(read_label_file(f))
    return out


def effective_labels(
    records: Sequence[AnswerLabel | PassageLabel | UndoRecord],
) -> dict[tuple[str, str], Label]:
    """Current label per (labeler, item_id): the last record wins, ``undo`` removes it."""
    cur: dict[tuple[str, str], Label] = {}
    for r in records:
        key = (r.labeler, r.item_id)
        if isinstance(r, UndoRecord):
            cur.pop(key, None)
        else:
            cur.pop(key, None)  # re-insert: dict order = order of the latest label
            cur[key] = r
    return cur


RESOLVED_SCHEMA: dict[str, pl.DataType] = {
    "item_id": pl.String(),
    "kind": pl.String(),
    "system": pl.String(),
    "question_id": pl.String(),
    "chunk_id": pl.String(),
    "content_sha": pl.String(),
    "value": pl.String(),  # answer: correct|incorrect|cant_tell; passage: "0"|"1"|"2"
    "n_labelers": pl.Int64(),
    "conflict": pl.Boolean(),  # labellers disagree (value or content): not used
}


def resolve_labels(records: Sequence[AnswerLabel | PassageLabel | UndoRecord]) -> pl.DataFrame:
    """One row per labelled item (:data:`RESOLVED_SCHEMA`) over all labellers."""
    by_item: dict[str, list[Label]] = {}
    for (_, item), lab in effective_labels(records).items():
        by_item.setdefault(item, []).append(lab)
    rows: list[dict[str, Any]] = []
    for item, labs in by_item.items():
        first = labs[0]
        distinct = {(str(x.value), x.content_sha, x.kind) for x in labs}
        rows.append(
            {
                "item_id": item,
                "kind": first.kind,
                "system": first.system if isinstance(first, AnswerLabel) else None,
                "question_id": first.question_id,
                "chunk_id": first.chunk_id if isinstance(first, PassageLabel) else None,
                "content_sha": first.content_sha,
                "value": str(first.value),
                "n_labelers": len(labs),
                "conflict": len(distinct) > 1,
            }
        )
    return pl.DataFrame(rows, schema=RESOLVED_SCHEMA)


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


_PROCESS_LOCKS: dict[Path, threading.Lock] = {}
_PROCESS_LOCKS_GUARD = threading.Lock()


class LabelStore:
    """The append-only label file of one labeller (``<labels_dir>/<labeler>.jsonl``)."""

    def __init__(self, labels_dir: Path, labeler: str = DEFAULT_LABELER) -> None:
        self.labels_dir = Path(labels_dir)
        self.labeler = check_labeler(labeler)
        self.path = self.labels_dir / f"{self.labeler}.jsonl"
        key = self.path.resolve()
        with _PROCESS_LOCKS_GUARD:
            self._tlock = _PROCESS_LOCKS.setdefault(key, threading.Lock())

    @contextmanager
    def _locked(self) -> Iterator[None]:
        """This thread and process alone append: a thread lock, then ``flock`` on the folder
        itself (no lock file is left beside the labels)."""
        self.labels_dir.mkdir(parents=True, exist_ok=True)
        with self._tlock:
            fd = os.open(self.labels_dir, os.O_RDONLY)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                yield
            finally:
                os.close(fd)  # releases the lock

    def records(self) -> list[AnswerLabel | PassageLabel | UndoRecord]:
        """This labeller's records, in order (strictly parsed)."""
        return read_label_file(self.path) if self.path.is_file() else []

    def current(self) -> dict[str, Label]:
        """This labeller's effective label per item_id (latest last)."""
        return {item: lab for (_, item), lab in effective_labels(self.records()).items()}

    def append(self, *records: AnswerLabel | PassageLabel | UndoRecord) -> None:
        """Append ``records`` atomically and durably (all or none; existing lines untouched)."""
        for r in records:
            if r.labeler != self.labeler:
                raise RagcourtError(
                    f"{self.path}: record of labeler '{r.labeler}' in '{self.labeler}''s file"
                )
        if not records:
            return
        new = "".join(r.model_dump_json() + "\n" for r in records).encode("utf-8")
        with self._locked():
            old = self.path.read_bytes() if self.path.is_file() else b""
            if old and not old.endswith(b"\n"):
                raise RagcourtError(f"{self.path}: last line is incomplete; fix the file first")
            with atomic_path(self.path) as tmp, tmp.open("wb") as f:
                f.write(old + new)
                f.flush()
                os.fsync(f.fileno())
            _fsync_dir(self.labels_dir)

    def undo_last(self) -> str | None:
        """Withdraw this labeller's most recent effective label; its item_id, or None."""
        cur = self.current()
        if not cur:
            return None
        item = next(reversed(cur))
        self.append(UndoRecord(item_id=item, labeler=self.labeler))
        return item


# ------------------------------------------------------------------ sample <-> records


def make_label(
    item: Mapping[str, Any], value: str | int, labeler: str, source: Literal["web", "csv"]
) -> Label:
    """The record for a person's ``value`` on a sample row ``item`` (a SAMPLE_SCHEMA row).

    Answers take ``correct`` / ``incorrect`` / ``cant_tell`` (also ``c``/``i``/``t``,
    ``1``/``2``/``3``, ``can't tell``); passages take 0 / 1 / 2. Anything else is a
    RagcourtError.
    """
    common: dict[str, Any] = {k: item[k] for k in ("item_id", "question_id", "content_sha")}
    common |= {"labeler": labeler, "source": source}
    if item["kind"] == "answer":
        return AnswerLabel(**common, system=item["system"], value=normalize_answer_value(value))
    return PassageLabel(**common, chunk_id=item["chunk_id"], value=normalize_passage_value(value))


_ANSWER_ALIASES = {
    "correct": "correct",
    "c": "correct",
    "1": "correct",
    "incorrect": "incorrect",
    "i": "incorrect",
    "2": "incorrect",
    "cant_tell": "cant_tell",
    "can't tell": "cant_tell",
    "cant tell": "cant_tell",
    "t": "cant_tell",
    "3": "cant_tell",
}


def normalize_answer_value(value: str | int) -> AnswerValue:
    v = _ANSWER_ALIASES.get(str(value).strip().lower())
    if v == "correct":
        return "correct"
    if v == "incorrect":
        return "incorrect"
    if v == "cant_tell":
        return "cant_tell"
    raise RagcourtError(
        f"answer label '{value}' is not one of correct/incorrect/cant_tell (or 1/2/3, c/i/t)"
    )


def normalize_passage_value(value: str | int) -> Literal[0, 1, 2]:
    v = str(value).strip()
    if v == "0":
        return 0
    if v == "1":
        return 1
    if v == "2":
        return 2
    raise RagcourtError(f"passage grade '{value}' is not one of 0, 1, 2")


CSV_COLUMNS: tuple[str, ...] = (
    "item_id",
    "kind",
    "question",
    "references",
    "answer",
    "passage",
    "allowed",
    "label",
    "content_sha",
)
REF_SEP = "\n---\n"


def export_csv(sample: pl.DataFrame, path: Path, labels: Mapping[str, Label] | None = None) -> Path:
    """Write ``sample`` (display order, system hidden) as a CSV for spreadsheet labelling,
    with the ``label`` column pre-filled from ``labels`` (item_id -> label); atomic. Every
    cell goes through :func:`~ragcourt.core.spreadsheet.to_cell` (no cell is a formula)."""
    labels = labels or {}

    def writer(tmp: Path) -> None:
        with tmp.open("w", encoding="utf-8", newline="") as f:
            w = csv.writer(f)
            w.writerow(CSV_COLUMNS)
            for r in sample.sort("position").iter_rows(named=True):
                lab = labels.get(r["item_id"])
                is_answer = r["kind"] == "answer"
                w.writerow(
                    to_row(
                        [
                            r["item_id"],
                            r["kind"],
                            r["question"],
                            REF_SEP.join(r["references"] or []),
                            r["answer"] or "",
                            r["passage"] or "",
                            "correct / incorrect / cant_tell" if is_answer else "0 / 1 / 2",
                            "" if lab is None else str(lab.value),
                            r["content_sha"],
                        ]
                    )
                )

    return write_with(path, writer)


@dataclass(frozen=True)
class ImportResult:
    """What :func:`import_csv` did: labels appended, rows already so labelled, blank rows."""

    appended: int
    unchanged: int
    blank: int


def _rows_with_start(reader: csv.DictReader[str]) -> Iterator[tuple[int, dict[str, str]]]:
    """(first physical line, row) of each record (a quoted field may span lines)."""
    while True:
        start = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            return
        yield start, row


def import_csv(path: Path, items: pl.DataFrame, store: LabelStore) -> ImportResult:
    """Append the labels filled into a CSV from :func:`export_csv` to ``store``.

    ``items`` are the labellable items (a sample or the whole population, SAMPLE_SCHEMA
    columns). Every row is checked first: an unknown item_id, an item whose content changed
    since the export (``content_sha``), a duplicate item_id or a bad label value is a
    RagcourtError naming ``file:line (row k)`` (the record's first line, and its row number
    as a spreadsheet shows it), and nothing is appended. Blank labels are skipped;
    a label equal to the labeller's current one is not appended again. Cells are read back
    with :func:`~ragcourt.core.spreadsheet.from_cell` (the export's formula quoting undone).
    """
    if not path.is_file():
        raise RagcourtError(f"{path}: CSV file not found")
    by_id = {r["item_id"]: r for r in items.iter_rows(named=True)}
    current = store.current()
    new: list[Label] = []
    unchanged = blank = 0
    seen: set[str] = set()
    try:
        with path.open(encoding="utf-8-sig", newline="") as f:
            reader = csv.DictReader(f)
            missing = {"item_id", "label"} - set(reader.fieldnames or [])
            if missing:
                raise RagcourtError(f"{path}:1: missing column(s) {', '.join(sorted(missing))}")
            for k, (start, cells) in enumerate(_rows_with_start(reader), start=2):
                row = {key: from_cell(v) if isinstance(v, str) else v for key, v in cells.items()}
                where = f"{path}:{start} (row {k})"
                item_id = (row.get("item_id") or "").strip()
                value = (row.get("label") or "").strip()
                if item_id in seen:
                    raise RagcourtError(f"{where}: item_id '{item_id}' appears twice")
                seen.add(item_id)
                item = by_id.get(item_id)
                if item is None:
                    raise RagcourtError(
                        f"{where}: item_id '{item_id}' is not an item of the current data"
                    )
                sha = (row.get("content_sha") or "").strip()
                if sha and sha != item["content_sha"]:
                    raise RagcourtError(
                        f"{where}: item '{item_id}' changed since the export (re-export it)"
                    )
                if not value:
                    blank += 1
                    continue
                try:
                    lab = make_label(item, value, store.labeler, "csv")
                except RagcourtError as err:
                    raise RagcourtError(f"{where}: {err}") from None
                old = current.get(item_id)
                if (
                    old is not None
                    and old.value == lab.value
                    and old.content_sha == lab.content_sha
                ):
                    unchanged += 1
                    continue
                new.append(lab)
    except UnicodeDecodeError:
        raise RagcourtError(f"{path}: CSV is not UTF-8 text") from None
    except csv.Error as err:
        raise RagcourtError(f"{path}: not a readable CSV ({err})") from None
    store.append(*new)
    return ImportResult(appended=len(new), unchanged=unchanged, blank=blank)
