"""A project's own stage with its own settings and table is three files plus the regenerated
dvc.yaml: its folder ``stages/<name>/`` (declaration, catalog entry, table schema, settings
model and node function in one module), its name in ``PIPELINE`` and its settings in
params.yaml. Real ``ragcourt init``, git and DVC; the stage runs under ``dvc repro``, and a
bad setting is one line naming the key."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
import yaml
from typer.testing import CliRunner

from ragcourt.cli.main import app

STAGE = '''"""The ``word_count`` stage: words of at least ``min_len`` characters per document."""

from __future__ import annotations

from typing import Any

import polars as pl
from pydantic import BaseModel, Field

from ragcourt.core import catalog
from ragcourt.core.io import read_table, write_parquet
from ragcourt.orchestration.stage_def import StageDef, arts


class WordCountSettings(BaseModel, extra="forbid"):
    min_len: int = Field(default=1, ge=1, description="shortest word counted")


def run(params: Any) -> None:
    settings = STAGE.read_settings(params)
    assert isinstance(settings, WordCountSettings)
    docs = read_table(catalog.path("documents"), "documents")
    words = pl.col("text").str.split(" ").list.eval(
        pl.element().filter(pl.element().str.len_chars() >= settings.min_len)
    )
    out = docs.select("doc_id", words.list.len().alias("words"))
    write_parquet(out, catalog.path("word_counts"), "word_counts")


STAGE = StageDef(
    "word_count",
    "stages.word_count:run",
    "Words per document.",
    deps=arts("documents"),
    artifacts=(
        catalog.Artifact("word_counts", "data/word_counts.parquet", "word_count", "word_counts"),
    ),
    tables=(("word_counts", {"doc_id": pl.String, "words": pl.UInt32}),),
    settings=WordCountSettings,
)
'''


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # its own stages/ only
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env |= {"DVC_NO_ANALYTICS": "1", "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com"}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    return env


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, env=_env(), capture_output=True, text=True)


def test_a_projects_own_stage_is_three_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = tmp_path / "project"
    assert CliRunner().invoke(app, ["init", str(ws)]).exit_code == 0
    assert _run(["git", "add", "-A"], ws).returncode == 0
    assert _run(["git", "commit", "-qm", "init"], ws).returncode == 0

    (ws / "stages/word_count").mkdir()
    (ws / "stages/word_count/__init__.py").write_text(STAGE)
    init = ws / "stages/__init__.py"
    order = init.read_text().replace('    "report",\n)', '    "report",\n    "word_count",\n)')
    init.write_text(order)
    params = yaml.safe_load((ws / "params.yaml").read_text())
    params["stage_params"] = {"word_count": {"min_len": 4}}
    (ws / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    monkeypatch.chdir(ws)
    res = CliRunner().invoke(app, ["dvc", "generate"])
    assert res.exit_code == 0, res.output
    changed = _run(["git", "status", "--porcelain", "--untracked-files=all"], ws).stdout
    assert sorted(line[3:] for line in changed.splitlines()) == [
        "dvc.yaml", "params.yaml", "stages/__init__.py", "stages/word_count/__init__.py",
    ]  # fmt: skip
    block = yaml.safe_load((ws / "dvc.yaml").read_text())["stages"]["word_count"]
    assert block["cmd"] == "python -m stages word_count"
    assert block["params"] == [
        "stage_params.word_count", {"data/code/stages.yaml": ["word_count"]}
    ]  # fmt: skip
    assert block["deps"] == ["data/documents.parquet"]
    assert block["outs"] == ["data/word_counts.parquet"]

    proc = _run([sys.executable, "-m", "dvc", "repro", "word_count"], ws)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    counts = pl.read_parquet(ws / "data/word_counts.parquet")
    docs = pl.read_parquet(ws / "data/documents.parquet")
    assert counts["doc_id"].to_list() == docs["doc_id"].to_list()
    assert all(n > 0 for n in counts["words"].to_list())

    params["stage_params"]["word_count"]["min_len"] = 0
    (ws / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    proc = _run([sys.executable, "-m", "stages", "word_count"], ws)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "stage_params.word_count.min_len:" in lines[0], proc.stderr
