"""Sweeps: grid parsing and expansion, per-point workspaces, and the Prefect sweep flow on a
tiny project (each point a separate pipeline process and flow run in its own workspace copy)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest
import yaml
from _tiny_project import make_project

from flows.sweep import run_sweep
from ragcourt.core.errors import ConfigError, ParamsError
from ragcourt.orchestration.sweeps import (
    apply_overrides,
    dvc_exp_commands,
    grid_points,
    parse_grid,
    point_name,
    prepare_workspace,
)


def test_parse_grid_reads_yaml_scalars_and_rejects_bad_items() -> None:
    grid = parse_grid(["chunkings.c16.size=16,24", "embedders.minilm.model=all-minilm-l6-v2"])
    assert grid == {
        "chunkings.c16.size": [16, 24],
        "embedders.minilm.model": ["all-minilm-l6-v2"],
    }
    for bad in (["chunkings.c16.size"], ["=1,2"], ["a.b="]):
        with pytest.raises(ConfigError, match="expected KEY=V1,V2"):
            parse_grid(bad)
    with pytest.raises(ConfigError, match="given twice"):
        parse_grid(["a.b=1", "a.b=2"])


def test_grid_points_are_the_cartesian_product_in_order() -> None:
    points = grid_points({"x.size": [1, 2], "y.model": ["a", "b", "c"]})
    assert len(points) == 6
    assert points[0] == {"x.size": 1, "y.model": "a"}
    assert points[-1] == {"x.size": 2, "y.model": "c"}
    names = [point_name(p) for p in points]
    assert len(set(names)) == 6 and names[1] == "x.size-1__y.model-b"


def test_apply_overrides_needs_an_existing_parent() -> None:
    data = {"chunkings": {"c16": {"size": 16, "overlap": 2}}}
    out = apply_overrides(data, {"chunkings.c16.size": 24})
    assert out["chunkings"]["c16"] == {"size": 24, "overlap": 2}
    assert data["chunkings"]["c16"]["size"] == 16  # the input is not modified
    with pytest.raises(ConfigError, match=r"'c99' is not in params\.yaml"):
        apply_overrides(data, {"chunkings.c99.size": 8})


def test_prepare_workspace_validates_links_and_shares_the_reply_cache(tmp_path: Path) -> None:
    root = make_project(tmp_path / "p")
    ws = prepare_workspace(root, "params.yaml", {"chunkings.c16.size": 24}, tmp_path / "w")
    params = yaml.safe_load((ws / "params.yaml").read_text())
    assert params["chunkings"]["c16"] == {"size": 24, "overlap": 2}
    assert Path(params["llm"]["cache_dir"]) == (root / ".ragcourt/cache").resolve()
    assert (ws / "data/corpus").is_symlink() and (ws / "my_qa.jsonl").is_symlink()
    assert (ws / "configs/models.yaml").is_file()
    assert json.loads((ws / "sweep_point.json").read_text()) == {"chunkings.c16.size": 24}
    with pytest.raises(ParamsError, match="overlap"):
        prepare_workspace(root, "params.yaml", {"chunkings.c16.size": 2}, tmp_path / "bad")


def test_dvc_experiment_commands_set_every_key() -> None:
    cmds = list(
        dvc_exp_commands(
            {"chunkings.c16.size": [16, 24], "embedders.m.model": ["a"]}, "retrieval_eval"
        )
    )
    assert cmds[1] == [
        "dvc",
        "exp",
        "run",
        "--queue",
        "-S",
        "chunkings.c16.size=24",
        "-S",
        'embedders.m.model="a"',
        "retrieval_eval",
    ]


@pytest.fixture(scope="module")
def prefect_api() -> Iterator[None]:
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield


def test_sweep_reports_each_finished_point_and_limits_parallel_points(
    prefect_api: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Points stand in for real pipeline runs; the flow's progress events feed the CLI bar."""
    import threading
    import time

    from prefect import task

    import flows.sweep as sweep
    from ragcourt.orchestration import progress

    running, most = [0], [0]
    lock = threading.Lock()

    @task(task_run_name="point {name}")
    def fake_point(name: str, workspace: str, params_path: str, until: str) -> dict[str, float]:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.3)
        with lock:
            running[0] -= 1
        return {"c16/minilm/dense/R@3": float(Path(workspace).name.endswith("40"))}

    monkeypatch.setattr(sweep, "run_point", fake_point)
    root = make_project(tmp_path / "p", chunkings={"c16": (16, 2)})
    events: list[progress.StageEvent] = []
    with progress.listening(events.append):
        out = run_sweep(
            grid={"chunkings.c16.size": [12, 24, 40]},
            workdir=str(root),
            name="fake",
            max_parallel=2,
        )
    assert events[0] == progress.StageEvent("plan", total=3)
    done = [e for e in events[1:] if e.kind == "done"]
    assert sorted(e.call for e in done) == ["c16.size-12", "c16.size-24", "c16.size-40"]
    assert {e.state for e in done} == {"Completed"}
    assert most[0] <= 2
    assert [r[0] for r in out["rows"]] == ["c16.size-12", "c16.size-24", "c16.size-40"]


@pytest.mark.slow  # two child pipeline runs with MiniLM and retrieval evaluation (~2 min)
def test_sweep_flow_runs_each_point_in_its_workspace_and_summarises(
    prefect_api: None, tmp_path: Path
) -> None:
    root = make_project(tmp_path / "p", chunkings={"c16": (16, 2)})
    out = run_sweep(
        grid={"chunkings.c16.size": [12, 40]},
        workdir=str(root),
        until="retrieval_eval",
        name="t1",
    )
    sweep_dir = root / ".ragcourt/sweeps/t1"
    summary = pl.read_parquet(sweep_dir / "sweep_summary.parquet")
    assert summary["point"].to_list() == ["c16.size-12", "c16.size-40"]
    assert summary["chunkings.c16.size"].to_list() == [12, 40]
    recall = "c16/minilm/dense/R@3"
    assert recall in summary.columns and summary[recall].null_count() == 0
    sizes: dict[str, int] = {
        n: max(pl.read_parquet(sweep_dir / n / "data/chunks/c16.parquet")["n_tokens"].to_list())
        for n in summary["point"]
    }
    assert sizes["c16.size-12"] <= 12 < sizes["c16.size-40"] <= 40
    assert out["path"].endswith("sweep_summary.md")
    assert "c16.size-40" in (sweep_dir / "sweep_summary.md").read_text()
