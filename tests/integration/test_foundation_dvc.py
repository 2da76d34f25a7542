"""DVC stage graph in a throwaway git repo: repro twice is a no-op; a chunk-size change re-runs
only that chunking and what depends on it; an embedder change does not re-run chunking.

Uses the real ingest/chunk/embed stage blocks of the repo's dvc.yaml, a tiny two-file corpus,
two chunkings and the MiniLM embedder only. The fast test drops the embed stages (no model
load); the slow one runs the full ingest -> chunk -> embed graph.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Collection
from pathlib import Path

import polars as pl
import pytest
import yaml

from ragcourt.orchestration.stage_graph import CODE_STEP

REPO = Path(__file__).resolve().parents[2]

DOC_A = " ".join(
    f"Sentence {i} of the first address discusses the tariff, the budget and the army."
    for i in range(40)
)
DOC_B = " ".join(
    f"Paragraph {i} of the second address concerns treaties, the navy and public lands."
    for i in range(40)
)


def sh(cwd: Path, *args: str) -> str:
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env.pop("PYTHONPATH", None)  # the ragcourt/ copy inside the temp repo must be the one imported
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True, env=env)
    assert proc.returncode == 0, f"{' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout + proc.stderr


def ran_stages(output: str) -> set[str]:
    return set(re.findall(r"Running stage '([^']+)'", output))


def make_repo(root: Path, stages: tuple[str, ...]) -> Path:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    for d in ("ragcourt", "stages"):
        shutil.copytree(REPO / d, root / d, ignore=shutil.ignore_patterns("__pycache__"))
    (root / "configs").mkdir()
    shutil.copy(REPO / "configs/models.yaml", root / "configs/models.yaml")
    dvc = yaml.safe_load((REPO / "dvc.yaml").read_text())
    kept = (CODE_STEP, *stages)  # the code step writes the digests every stage tracks
    dvc["stages"] = {k: v for k, v in dvc["stages"].items() if k in kept}
    (root / "dvc.yaml").write_text(yaml.safe_dump(dvc, sort_keys=False))
    params = yaml.safe_load((REPO / "params.yaml").read_text())
    params["chunkings"] = {
        "c256": {"size": 256, "overlap": 32},
        "c512": {"size": 512, "overlap": 64},
    }
    params["embedders"] = {"minilm": {"model": "all-minilm-l6-v2", "batch_size": 64}}
    params["qagen"]["reference_chunking"] = "c512"
    (root / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    corpus = root / "data/corpus"
    corpus.mkdir(parents=True)
    (corpus / "a.txt").write_text(DOC_A)
    (corpus / "b.md").write_text("# Second address\n\n" + DOC_B)
    sh(root, "git", "init", "-q")
    sh(root, "git", "config", "user.email", "test@example.com")
    sh(root, "git", "config", "user.name", "test")
    sh(root, "dvc", "init", "-q")
    sh(root, "dvc", "config", "core.analytics", "false")
    sh(root, "git", "add", "-A")
    sh(root, "git", "commit", "-q", "-m", "init")
    return root


def max_tokens(repo: Path, chunking: str) -> int:
    chunks = pl.read_parquet(repo / f"data/chunks/{chunking}.parquet")
    n_tokens: list[int] = chunks["n_tokens"].to_list()
    return max(n_tokens)


def test_chunk_graph_noop_and_size_change_reruns_only_that_chunking(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, ("ingest", "chunk"))
    first = sh(repo, "dvc", "repro")
    assert ran_stages(first) == {CODE_STEP, "ingest", "chunk@c256", "chunk@c512"}
    assert 200 < max_tokens(repo, "c256") <= 256
    sh(repo, "git", "add", "-A")
    sh(repo, "git", "commit", "-q", "-m", "lock")
    assert ran_stages(sh(repo, "dvc", "repro")) == set()
    exp = sh(repo, "dvc", "exp", "run", "-S", "chunkings.c256.size=64")
    assert ran_stages(exp) == {"chunk@c256"}, exp
    assert max_tokens(repo, "c256") <= 66  # really re-chunked, not restored from the run cache
    # back to the committed size: the run cache may restore the old output, which is correct
    sh(repo, "dvc", "exp", "run", "-S", "chunkings.c256.size=256")
    assert 200 < max_tokens(repo, "c256") <= 256


@pytest.mark.slow
def test_full_graph_repro_twice_and_targeted_reruns(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, ("ingest", "chunk", "embed"))
    first = sh(repo, "dvc", "repro")
    assert ran_stages(first) == {
        CODE_STEP, "ingest", "chunk@c256", "chunk@c512", "embed@c256-minilm", "embed@c512-minilm"
    }  # fmt: skip
    assert (repo / "data/index/c256__minilm.faiss").is_file()
    assert (repo / "data/embeddings/c512__minilm.parquet").is_file()
    sh(repo, "git", "add", "-A")
    sh(repo, "git", "commit", "-q", "-m", "lock")

    second = sh(repo, "dvc", "repro")
    assert ran_stages(second) == set(), second

    # an embedder parameter is not a chunking dependency
    params_path = repo / "params.yaml"
    original = params_path.read_text()
    changed = yaml.safe_load(original)
    changed["embedders"]["minilm"]["batch_size"] = 16
    params_path.write_text(yaml.safe_dump(changed, sort_keys=False))
    status = json.loads(sh(repo, "dvc", "status", "--json"))
    assert set(status) == {"embed@c256-minilm", "embed@c512-minilm"}
    params_path.write_text(original)
    assert json.loads(sh(repo, "dvc", "status", "--json")) == {}

    exp = sh(repo, "dvc", "exp", "run", "-S", "chunkings.c256.size=128")
    assert ran_stages(exp) == {"chunk@c256", "embed@c256-minilm"}, exp
    assert max_tokens(repo, "c256") <= 130


def test_plain_dvc_repro_never_puts_a_params_key_in_a_shell_command(tmp_path: Path) -> None:
    """A chunking key holding a quote and shell syntax, run with plain ``dvc repro`` (not
    ``ragcourt run``, which validates params first): the generated ``cmd`` has no key in it,
    so the shell runs nothing; the stage refuses the key in one line."""
    repo = make_repo(tmp_path, ("ingest", "chunk"))
    params = yaml.safe_load((repo / "params.yaml").read_text())
    hostile = "c1'; touch pwned; echo '"
    params["chunkings"][hostile] = {"size": 64, "overlap": 0}
    (repo / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env.pop("PYTHONPATH", None)
    proc = subprocess.run(["dvc", "repro"], cwd=repo, capture_output=True, text=True, env=env)
    assert proc.returncode != 0
    assert not (repo / "pwned").exists()
    assert "not a safe name" in proc.stdout + proc.stderr


def test_partition_comes_from_dvc_stage_address(monkeypatch: pytest.MonkeyPatch) -> None:
    from ragcourt.core.entry import dvc_partition
    from ragcourt.core.errors import RagcourtError

    axes: dict[str, Collection[str]] = {"chunking": ["c256", "c-1"], "embedder": ["minilm", "1-x"]}
    monkeypatch.setenv("DVC_STAGE", "embed@c256-minilm")
    assert dvc_partition("embed", axes) == {"chunking": "c256", "embedder": "minilm"}
    monkeypatch.setenv("DVC_STAGE", "embed@c-1-x")  # neither c256+1-x nor c-1+x: unknown
    with pytest.raises(RagcourtError, match="no configured combination"):
        dvc_partition("embed", axes)
    monkeypatch.setenv("DVC_STAGE", "embed@c-1-minilm")
    assert dvc_partition("embed", axes) == {"chunking": "c-1", "embedder": "minilm"}
    monkeypatch.delenv("DVC_STAGE")
    with pytest.raises(RagcourtError, match="give --chunking --embedder"):
        dvc_partition("embed", axes)


def test_runtime_settings_are_not_tracked_so_changing_one_reruns_nothing(tmp_path: Path) -> None:
    """``llm.concurrency`` (a runtime setting: how, not what) is left out of the stage's
    tracked params; ``llm.temperature`` is tracked, so changing it makes the stage stale."""
    repo = make_repo(tmp_path, ("llm_routes",))
    shutil.copytree(REPO / "configs", repo / "configs", dirs_exist_ok=True)
    assert ran_stages(sh(repo, "dvc", "repro")) == {CODE_STEP, "llm_routes"}
    lock = yaml.safe_load((repo / "dvc.lock").read_text())
    tracked = lock["stages"]["llm_routes"]["params"]["params.yaml"]
    assert (
        "llm.temperature" in tracked and "llm.concurrency" not in tracked and "llm" not in tracked
    )
    params_path = repo / "params.yaml"
    original = params_path.read_text()
    for key, value, stale in (
        ("concurrency", 3, False),
        ("timeout_s", 7, False),
        ("temperature", 0.5, True),
    ):
        changed = yaml.safe_load(original)
        changed["llm"][key] = value
        params_path.write_text(yaml.safe_dump(changed, sort_keys=False))
        status = json.loads(sh(repo, "dvc", "status", "--json"))
        assert ("llm_routes" in status) is stale, (key, status)
    params_path.write_text(original)
