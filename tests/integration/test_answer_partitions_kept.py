"""The answer stage keeps the partitions of systems the systems file no longer lists (answers
from outside may be impossible to get again) and leaves them out of the answers table and
summary; ``ragcourt answers prune`` deletes them. Real answer stage, real Parquet, answers-file
systems (no model)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest
import typer
import yaml
from typer.testing import CliRunner

from ragcourt.answering import stage as answer
from ragcourt.cli.external_cmd import answers_app
from ragcourt.core.io import read_table, write_parquet
from ragcourt.core.schemas import frame_schema
from ragcourt.orchestration.params import Params, load_params

ROOT = Path(__file__).resolve().parents[2]
QA = {"q1": "When was the Louisiana Purchase made?", "q2": "Who built the railroad?"}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Params:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "configs/prompts").mkdir(parents=True)
    shutil.copy(ROOT / "configs/prompts/answer.yaml", tmp_path / "configs/prompts/answer.yaml")
    params = load_params(ROOT / "params.yaml").model_copy(deep=True)
    params.llm.cache_dir = str(tmp_path / ".cache")
    params.llm.models_file = str(ROOT / "configs/models.yaml")
    params.llm.metrics_dir = "data/metrics"
    params.systems_file = "systems.yaml"
    Path("params.yaml").write_text(yaml.safe_dump(params.model_dump(mode="json")))
    qa = pl.DataFrame({"question_id": list(QA), "question": list(QA.values())})
    qa = qa.with_columns(
        pl.lit(None, dtype=t).alias(c) for c, t in frame_schema("qa").items() if c not in qa.columns
    )
    write_parquet(qa, "data/qa/qa.parquet", "qa")
    for team in ("team-a", "team-b"):
        Path(f"{team}.jsonl").write_text(
            "".join(json.dumps({"question_id": q, "answer": f"{team} on {q}"}) + "\n" for q in QA)
        )
    return params


def _systems(*teams: str) -> None:
    entries = [{"name": t, "kind": "answers_file", "path": f"{t}.jsonl"} for t in teams]
    Path("systems.yaml").write_text(yaml.safe_dump({"systems": entries}))


def test_unlisted_partitions_are_kept_left_out_and_pruned_on_request(project: Params) -> None:
    _systems("team-a", "team-b")
    answer.run(project)
    part_b = Path("data/answers/systems/team-b.parquet")
    assert part_b.is_file()
    before = part_b.read_bytes()

    _systems("team-a")  # another systems file: team-b is not listed
    Path("team-b.jsonl").unlink()  # and its answers cannot be produced again
    answer.run(project)
    assert part_b.read_bytes() == before  # kept, untouched
    out = read_table("data/answers/answers.parquet", "answers")
    assert set(out["system"]) == {"team-a"}  # what judge and tournament read
    summary = json.loads(Path("data/answers/summary.json").read_text())
    assert list(summary) == ["team-a"]

    app = typer.Typer()
    app.add_typer(answers_app, name="answers")
    res = CliRunner().invoke(app, ["answers", "prune", "--dry-run"])
    assert res.exit_code == 0, res.output
    assert "will delete data/answers/systems/team-b.parquet" in res.output
    assert "would delete 1 partition file(s)" in res.output
    assert part_b.is_file()
    odd = Path("data/answers/systems/folder.parquet")  # not a partition file: never touched
    odd.mkdir()
    res = CliRunner().invoke(app, ["answers", "prune"])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert lines.index("will delete data/answers/systems/team-b.parquet") < len(lines) - 1
    assert "deleted 1 partition file(s)" in res.output
    assert not part_b.exists() and odd.is_dir()
    assert Path("data/answers/systems/team-a.parquet").is_file()
