"""Label records, the append-only JSONL store, and CSV export/import."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from ragcourt.calibration.labels import (
    AnswerLabel,
    LabelStore,
    UndoRecord,
    effective_labels,
    export_csv,
    import_csv,
    load_labels,
    make_label,
    resolve_labels,
)
from ragcourt.calibration.sampling import SampleParams, sample_items
from ragcourt.core.errors import RagcourtError


def _sample(w: Any, **kw: Any) -> pl.DataFrame:
    return sample_items(w.qa, w.answers, w.verdicts, w.correctness, w.relevance, SampleParams(**kw))


def _answer_item(sample: pl.DataFrame, k: int = 0) -> dict[str, Any]:
    return sample.filter(pl.col("kind") == "answer").row(k, named=True)


def test_append_keeps_existing_lines_and_reads_back(tmp_path: Path, world: Any) -> None:
    s = _sample(world, n_answer_items=9, n_passage_items=3)
    store = LabelStore(tmp_path / "labels", "ann")
    first = make_label(_answer_item(s, 0), "correct", "ann", "web")
    store.append(first)
    before = store.path.read_bytes()
    p = s.filter(pl.col("kind") == "passage").row(0, named=True)
    store.append(make_label(_answer_item(s, 1), "3", "ann", "web"), make_label(p, 2, "ann", "web"))
    after = store.path.read_bytes()
    assert after.startswith(before) and after.count(b"\n") == 3
    recs = store.records()
    assert [r.kind for r in recs] == ["answer", "answer", "passage"]
    assert recs[1].value == "cant_tell" and recs[2].value == 2  # type: ignore[union-attr]
    assert recs[0] == first
    assert load_labels(tmp_path / "labels") == recs
    # nothing but the label file is left in the folder (no temp or lock files)
    assert sorted(p.name for p in (tmp_path / "labels").iterdir()) == ["ann.jsonl"]


def test_last_label_wins_and_undo_withdraws(tmp_path: Path, world: Any) -> None:
    s = _sample(world, n_answer_items=9, n_passage_items=0)
    store = LabelStore(tmp_path, "ann")
    a, b = _answer_item(s, 0), _answer_item(s, 1)
    store.append(make_label(a, "correct", "ann", "web"))
    store.append(make_label(b, "incorrect", "ann", "web"))
    store.append(make_label(a, "incorrect", "ann", "web"))  # relabel a
    cur = store.current()
    assert {k: v.value for k, v in cur.items()} == {
        a["item_id"]: "incorrect",
        b["item_id"]: "incorrect",
    }
    assert list(cur)[-1] == a["item_id"]  # the latest label comes last
    assert store.undo_last() == a["item_id"]
    assert list(store.current()) == [b["item_id"]]
    assert store.undo_last() == b["item_id"]
    assert store.undo_last() is None
    assert isinstance(store.records()[-1], UndoRecord)


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("{not json", "not JSON"),
        ('{"kind": "answer"}', "item_id"),
        ('{"kind": "weird", "item_id": "a-0000000000000000", "labeler": "x"}', "kind"),
        ("", "empty line"),
    ],
)
def test_bad_rows_are_errors_naming_file_and_line(
    tmp_path: Path, world: Any, line: str, reason: str
) -> None:
    s = _sample(world, n_answer_items=3, n_passage_items=0)
    store = LabelStore(tmp_path, "ann")
    store.append(make_label(_answer_item(s), "correct", "ann", "web"))
    with store.path.open("a") as f:
        f.write(line + "\n")
    with pytest.raises(RagcourtError, match=rf"ann\.jsonl:2: invalid label row.*{reason}"):
        load_labels(tmp_path)


def test_bad_value_in_a_row_is_an_error(tmp_path: Path, world: Any) -> None:
    s = _sample(world, n_answer_items=3, n_passage_items=0)
    rec = json.loads(make_label(_answer_item(s), "correct", "ann", "web").model_dump_json())
    rec["value"] = "maybe"
    (tmp_path / "x.jsonl").write_text(json.dumps(rec) + "\n")
    with pytest.raises(RagcourtError, match=r"x\.jsonl:1: invalid label row: answer\.value"):
        load_labels(tmp_path)


@pytest.mark.parametrize("value", [True, False, 1.0, "1", None])
def test_a_passage_grade_in_a_label_file_is_strictly_an_integer(
    tmp_path: Path, value: object
) -> None:
    rec = {"kind": "passage", "item_id": "p-0123456789abcdef", "labeler": "ann",
           "question_id": "q", "chunk_id": "c", "content_sha": "0123456789abcdef",
           "value": value}  # fmt: skip
    (tmp_path / "x.jsonl").write_text(json.dumps(rec) + "\n")
    with pytest.raises(RagcourtError, match=r"x\.jsonl:1: invalid label row: passage\.value"):
        load_labels(tmp_path)
    rec["value"] = 2
    (tmp_path / "x.jsonl").write_text(json.dumps(rec) + "\n")
    assert load_labels(tmp_path)


@pytest.mark.parametrize("name", ["../evil", "a/b", "", ".hidden", "x" * 65, "sp ace"])
def test_labeler_names_cannot_escape_the_folder(tmp_path: Path, name: str) -> None:
    with pytest.raises(RagcourtError, match="labeler name"):
        LabelStore(tmp_path, name)


def test_concurrent_appends_lose_nothing(tmp_path: Path, world: Any) -> None:
    s = _sample(world, n_answer_items=None, n_passage_items=0)
    items = [r for r in s.iter_rows(named=True)][:40]
    stores = [LabelStore(tmp_path, "ann") for _ in range(4)]  # separate objects, same file

    def work(k: int) -> None:
        for it in items[k::4]:
            stores[k].append(make_label(it, "correct", "ann", "web"))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert {r.item_id for r in stores[0].records()} == {it["item_id"] for it in items}
    assert len(stores[0].records()) == 40


_APPENDER = """
import json, sys
from pathlib import Path
from ragcourt.calibration.labels import LabelStore, parse_line
store = LabelStore(Path(sys.argv[1]), "ann")
for line in Path(sys.argv[2]).read_text().splitlines():
    store.append(parse_line(line, "input"))
"""


def test_concurrent_processes_lose_nothing(tmp_path: Path, world: Any) -> None:
    """Two processes append to the same file at once (``flock`` on the folder)."""
    s = _sample(world, n_answer_items=None, n_passage_items=0)
    items = [r for r in s.iter_rows(named=True)][:60]
    procs = []
    for k in range(2):
        src = tmp_path / f"in{k}.jsonl"
        src.write_text(
            "".join(
                make_label(it, "incorrect", "ann", "web").model_dump_json() + "\n"
                for it in items[k::2]
            )
        )
        procs.append(
            subprocess.Popen([sys.executable, "-c", _APPENDER, str(tmp_path / "labels"), str(src)])
        )
    assert [p.wait(120) for p in procs] == [0, 0]
    recs = LabelStore(tmp_path / "labels", "ann").records()
    assert len(recs) == 60 and {r.item_id for r in recs} == {it["item_id"] for it in items}


def test_a_failed_write_leaves_the_file_as_it_was(
    tmp_path: Path, world: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = _sample(world, n_answer_items=6, n_passage_items=0)
    store = LabelStore(tmp_path, "ann")
    store.append(make_label(_answer_item(s, 0), "correct", "ann", "web"))
    before = store.path.read_bytes()

    def crash(fd: int) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", crash)  # the os module labels writes through
    with pytest.raises(OSError, match="disk full"):
        store.append(make_label(_answer_item(s, 1), "incorrect", "ann", "web"))
    monkeypatch.undo()
    assert store.path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_resolve_labels_flags_conflicts_between_labelers(world: Any) -> None:
    s = _sample(world, n_answer_items=6, n_passage_items=0)
    a, b = _answer_item(s, 0), _answer_item(s, 1)
    recs = [
        make_label(a, "correct", "ann", "web"),
        make_label(a, "incorrect", "bob", "web"),
        make_label(b, "correct", "ann", "web"),
        make_label(b, "correct", "bob", "csv"),
    ]
    got = {r["item_id"]: r for r in resolve_labels(recs).iter_rows(named=True)}
    assert got[a["item_id"]]["conflict"] is True and got[a["item_id"]]["n_labelers"] == 2
    assert got[b["item_id"]]["conflict"] is False and got[b["item_id"]]["value"] == "correct"
    assert len(effective_labels(recs)) == 4


def _fill(path: Path, out: Path, values: dict[int, str]) -> None:
    with path.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    for k, v in values.items():
        rows[k]["label"] = v
    with out.open("w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def test_csv_round_trip(tmp_path: Path, world: Any) -> None:
    s = _sample(world, n_answer_items=9, n_passage_items=3)
    store = LabelStore(tmp_path / "labels", "ann")
    exported = export_csv(s, tmp_path / "sample.csv")
    with exported.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == s.height and "system" not in rows[0]
    systems = {"alpha", "beta", "gamma"}
    assert not any(x in r["item_id"] + r["content_sha"] for r in rows for x in systems)
    kinds = [r["kind"] for r in rows]
    values = {}
    for k, kind in enumerate(kinds[:6]):
        values[k] = "c" if kind == "answer" else "1"
    _fill(exported, tmp_path / "filled.csv", values)
    res = import_csv(tmp_path / "filled.csv", s, store)
    assert (res.appended, res.unchanged, res.blank) == (6, 0, s.height - 6)
    cur = store.current()
    assert {cur[rows[k]["item_id"]].source for k in values} == {"csv"}
    again = import_csv(tmp_path / "filled.csv", s, store)
    assert (again.appended, again.unchanged) == (0, 6)
    # re-export pre-fills the labels
    export_csv(s, tmp_path / "again.csv", store.current())
    with (tmp_path / "again.csv").open(encoding="utf-8", newline="") as f:
        refilled = list(csv.DictReader(f))
    assert sum(1 for r in refilled if r["label"]) == 6


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ({"label": "perhaps"}, "is not one of"),
        ({"item_id": "a-ffffffffffffffff"}, "is not an item of the current data"),
        ({"content_sha": "0123456789abcdef"}, "changed since the export"),
    ],
)
def test_csv_import_errors_name_file_and_line_and_append_nothing(
    tmp_path: Path, world: Any, edit: dict[str, str], message: str
) -> None:
    s = _sample(world, n_answer_items=6, n_passage_items=0)
    store = LabelStore(tmp_path / "labels", "ann")
    exported = export_csv(s, tmp_path / "sample.csv")
    with exported.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    rows[0]["label"] = "correct"
    rows[2]["label"] = "incorrect"
    rows[2].update(edit)
    with (tmp_path / "bad.csv").open("w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    # the record's first line (header is line 1; quoted fields may span lines) and its row
    with pytest.raises(RagcourtError, match=rf"bad\.csv:\d+ \(row 4\): .*{message}"):
        import_csv(tmp_path / "bad.csv", s, store)
    assert not store.path.exists()


def test_csv_import_needs_the_columns(tmp_path: Path, world: Any) -> None:
    s = _sample(world, n_answer_items=3, n_passage_items=0)
    (tmp_path / "x.csv").write_text("id,value\n1,2\n")
    with pytest.raises(RagcourtError, match=r"x\.csv:1: missing column\(s\) item_id, label"):
        import_csv(tmp_path / "x.csv", s, LabelStore(tmp_path, "ann"))


def test_make_label_rejects_bad_values(world: Any) -> None:
    s = _sample(world, n_answer_items=3, n_passage_items=3)
    p = s.filter(pl.col("kind") == "passage").row(0, named=True)
    with pytest.raises(RagcourtError, match="passage grade '3'"):
        make_label(p, 3, "ann", "web")
    with pytest.raises(RagcourtError, match="answer label 'yes'"):
        make_label(_answer_item(s), "yes", "ann", "web")
    lab = make_label(_answer_item(s), "Can't tell", "ann", "web")
    assert isinstance(lab, AnswerLabel) and lab.value == "cant_tell"
    assert os.sep not in lab.item_id
