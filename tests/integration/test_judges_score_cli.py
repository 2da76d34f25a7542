"""``ragcourt judges score``: users score their own labelled pairs with any trained judge (the
shipped reading model and linear judges, real files): every row gains a score and a label, the
reader's rows a span; bad lines become error rows naming the line; a rerun gives the same
bytes; ``--out`` refuses a directory."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from ragcourt.cli.main import app

PASSAGE = (
    "The harbour office of Valparaiso was opened in 1832. Its first director, Manuel Ortega, "
    "kept a green ledger in which every tea shipment was recorded."
)


def _run(*args: str) -> tuple[int, str]:
    """(exit code, stdout) on success, (exit code, everything printed) on failure."""
    res = CliRunner().invoke(app, ["judges", "score", *args])
    return res.exit_code, res.stdout if res.exit_code == 0 else res.output


def test_reader_scores_rows_and_keeps_bad_lines_as_errors(tmp_path: Path) -> None:
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(
        json.dumps({"id": 1, "question": "Who was the first director?", "passage": PASSAGE})
        + "\nnot json\n"
        + json.dumps({"question": "When was it opened?"})
        + "\n",
        encoding="utf-8",
    )
    out = tmp_path / "scores.jsonl"
    code, output = _run("reader", "--in", str(pairs), "--out", str(out))
    assert code == 0, output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 3
    first = rows[0]
    assert first["id"] == 1 and 0.0 <= first["score"] <= 1.0 and isinstance(first["label"], bool)
    assert "span" in first
    assert rows[1] == {"line": 2, "error": rows[1]["error"]} and "not JSON" in rows[1]["error"]
    assert rows[2]["line"] == 3 and "passage" in rows[2]["error"]
    again = tmp_path / "again.jsonl"
    assert _run("reader", "--in", str(pairs), "--out", str(again))[0] == 0
    assert again.read_bytes() == out.read_bytes()  # deterministic


def test_linear_correctness_and_one_line_errors(tmp_path: Path) -> None:
    pairs = tmp_path / "c.jsonl"
    pairs.write_text(json.dumps({"answer": "Manuel Ortega", "reference": "Ortega"}) + "\n")
    code, output = _run("correctness", "--in", str(pairs), "--out", "-")
    assert code == 0, output
    row = json.loads(output.splitlines()[0])
    assert 0.0 <= row["score"] <= 1.0 and "span" not in row
    code, output = _run("nonsense", "--in", str(pairs), "--out", "-")
    assert code == 2 and "role 'nonsense'" in output
    code, output = _run("correctness", "--in", str(pairs), "--out", str(tmp_path))
    assert code == 2 and "a directory" in output
    latin = tmp_path / "l.jsonl"
    latin.write_bytes(
        json.dumps({"answer": "café", "reference": "x"}, ensure_ascii=False).encode("latin-1")
    )
    code, output = _run("correctness", "--in", str(latin), "--out", "-")
    assert code == 2 and "line 1 is not utf-8 text" in output
    code, output = _run("correctness", "--in", str(latin), "--out", "-", "--encoding", "latin-1")
    assert code == 0 and "café" in output
