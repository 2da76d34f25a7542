"""Hand labels of accepted questions: the sheet and the counts (bench_answer_first.py)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import polars as pl
import pytest

from benchmarks import bench_answer_first as bench


def _label(q: str, source: str, s: bool, a: bool, r: bool) -> dict[str, object]:
    return {"source": source, "question": q, "standalone": s, "answerable": a,
            "reference_correct": r}  # fmt: skip


def test_label_sheet_writes_one_unlabelled_row_per_accepted_item(tmp_path: Path) -> None:
    qa = tmp_path / "qa.parquet"
    pl.DataFrame(
        {"question_id": ["q1"], "question": ["Who ran the office?"],
         "reference_answers": [["Manuel Ortega"]], "long_reference": ["Its director, Manuel."],
         "source_chunk_id": ["c256-doc0-0"], "context": ["Its director, Manuel Ortega."]}
    ).write_parquet(qa)  # fmt: skip
    out = tmp_path / "labels.jsonl"
    bench.label_sheet(argparse.Namespace(qa=qa, source="demo", out=out))
    [row] = [json.loads(x) for x in out.read_text().splitlines()]
    assert row["reference"] == "Manuel Ortega" and row["chunk_id"] == "c256-doc0-0"
    assert [row[k] for k in bench.LABELS] == [None, None, None]
    # an unlabelled sheet cannot be counted: the error names the file and line
    with pytest.raises(SystemExit, match=r"labels\.jsonl:1: labels \['standalone'"):
        bench.count_labels(argparse.Namespace(file=out))


def test_count_labels_good_is_all_three_per_source_and_overall(tmp_path: Path) -> None:
    rows = [
        _label("q1", "squad", True, True, True),
        _label("q2", "squad", True, False, True),
        _label("q3", "demo", True, True, True),
        _label("q4", "demo", False, True, True),
    ]
    f = tmp_path / "labels.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = bench.count_labels(argparse.Namespace(file=f))
    assert out["all"]["items"] == 4 and out["all"]["good"] == 2
    assert out["all"]["standalone"] == 0.75 and out["all"]["answerable"] == 0.75
    assert out["squad"]["good"] == 1 and out["demo"]["share_good"] == 0.5
    lo, hi = out["all"]["wilson_95"]
    assert lo < 0.5 < hi


def test_count_labels_of_a_run_match_its_accepted_items_by_question_and_chunk(
    tmp_path: Path,
) -> None:
    rows = [
        {**_label("q1", "first run", True, True, True), "context": "c1"},
        {**_label("q2", "first run", True, False, True), "context": "c2"},
        {**_label("q1", "first run", False, True, True), "context": "other chunk"},
    ]
    f = tmp_path / "labels.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    run = tmp_path / "run.json"
    accepted = [{"question": "q1", "context": "c1"}, {"question": "q2", "context": "c2"}]
    run.write_text(json.dumps({"accepted_items": accepted}))
    out = bench.count_labels(argparse.Namespace(file=f, run=[run]))
    assert out["run run.json"]["items"] == 2 and out["run run.json"]["good"] == 1
    # an accepted item nobody labelled is a one-line error naming the run
    run.write_text(json.dumps({"accepted_items": [{"question": "q9", "context": "c9"}]}))
    with pytest.raises(SystemExit, match=r"run\.json: 1 accepted items unlabelled: 'q9'"):
        bench.count_labels(argparse.Namespace(file=f, run=[run]))
