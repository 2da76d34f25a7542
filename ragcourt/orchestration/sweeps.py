"""Parameter sweeps (e.g. chunk size x embedder): grids, point workspaces, the point task,
the summary, and DVC experiments. The sweep flow itself is ``flows/sweep.py``.

A grid is ``{dotted params key: [values]}`` (the keys ``dvc exp run -S`` takes, e.g.
``chunkings.c256.size`` or ``embedders.minilm.model``); its points are the Cartesian product.

* Prefect (``sweep`` flow, ``ragcourt sweep``): each point gets its own workspace copy under
  ``.ragcourt/sweeps/<name>/<point>/`` (params.yaml with the overrides applied, configs/ copied,
  the corpus and other inputs linked, the LLM reply cache shared so identical model calls are
  not repeated), runs ``python -m flows pipeline --until <stage>`` there in a separate
  process (its own ``ragcourt-pipeline`` flow run on the same Prefect API, not a subflow of the
  sweep run: stages use cwd-relative paths, so points cannot share one process), then a
  summary table (one row per point: the overrides, then every retrieval metric of
  ``data/retrieval/metrics.json`` and the top system when the run reached the tournament) is
  written to ``sweep_summary.parquet``/``.md`` and published as a Prefect table artifact.
* DVC: :func:`queue_dvc_experiments` queues one ``dvc exp run --queue -S key=value ...`` per
  point and runs the queue; ``dvc exp show`` compares them.
"""

from __future__ import annotations

import copy
import itertools
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import yaml
from prefect import task

from ragcourt.core import catalog
from ragcourt.core.errors import ConfigError, ParamsError, RagcourtError
from ragcourt.core.io import write_text
from ragcourt.core.user_yaml import load_user_yaml, read_user_yaml
from ragcourt.orchestration.params import load_params, parse_params
from ragcourt.orchestration.project_code import child_env
from ragcourt.orchestration.stage_graph import selected_stages

SWEEPS_DIR = Path(".ragcourt/sweeps")
DEFAULT_GRID: dict[str, list[Any]] = {
    "chunkings.c256.size": [128, 256, 512],
    "embedders.minilm.model": ["all-minilm-l6-v2", "all-mpnet-base-v2"],
}
_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def _scalar(text: str) -> Any:
    """A command-line value as YAML reads it (``256`` -> int, ``true`` -> bool)."""
    return load_user_yaml(text, "sweep grid value") if text.strip() else text


def parse_grid(items: list[str]) -> dict[str, list[Any]]:
    """``["chunkings.c256.size=128,256", ...]`` -> ``{"chunkings.c256.size": [128, 256]}``."""
    grid: dict[str, list[Any]] = {}
    for item in items:
        key, sep, values = item.partition("=")
        key = key.strip()
        if not sep or not key or not values.strip():
            raise ConfigError(f"sweep grid item '{item}': expected KEY=V1,V2,...")
        if key in grid:
            raise ConfigError(f"sweep grid: key '{key}' given twice")
        grid[key] = [_scalar(v.strip()) for v in values.split(",")]
    if not grid:
        raise ConfigError("sweep grid is empty")
    return grid


def grid_points(grid: dict[str, list[Any]]) -> list[dict[str, Any]]:
    """The Cartesian product, in the order the keys and values were given."""
    keys = list(grid)
    return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*grid.values())]


def point_name(point: dict[str, Any]) -> str:
    """A readable, file-safe name: ``c256.size-128__minilm.model-all-mpnet-base-v2``."""
    parts = []
    for key, value in point.items():
        short = ".".join(key.split(".")[-2:])
        parts.append(f"{short}-{value}")
    return _SAFE.sub("_", "__".join(parts))


def apply_overrides(data: dict[str, Any], point: dict[str, Any]) -> dict[str, Any]:
    """A copy of the params mapping with every dotted key set (the key's parent must exist)."""
    out = copy.deepcopy(data)
    for key, value in point.items():
        node = out
        *parents, leaf = key.split(".")
        for part in parents:
            if not isinstance(node.get(part), dict):
                raise ConfigError(f"sweep grid key '{key}': '{part}' is not in params.yaml")
            node = node[part]
        node[leaf] = value
    return out


def validate_grid(root: Path, params_path: str, grid: dict[str, list[Any]]) -> None:
    """Every point's params must validate (checked before any flow or workspace starts)."""
    raw = read_user_yaml(root / params_path, ParamsError, empty={})
    for point in grid_points(grid):
        parse_params(apply_overrides(raw, point), f"{params_path} with {point}")


def _link(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    if dst.is_symlink() or dst.exists():
        return
    dst.symlink_to(src.resolve(), target_is_directory=src.is_dir())


def prepare_workspace(root: Path, params_path: str, point: dict[str, Any], dest: Path) -> Path:
    """Make ``dest`` a workspace for ``point``: params.yaml with the overrides (validated),
    configs/ copied, the project's stages/ and flows/ and every input file or folder params
    names linked, the reply cache shared."""
    raw = read_user_yaml(root / params_path, ParamsError, empty={})
    data = apply_overrides(raw, point)
    params = parse_params(data, dest / catalog.DEFAULT_PARAMS_FILE)
    base = load_params(root / params_path)
    llm = data.setdefault("llm", {})
    llm["cache_dir"] = str((root / base.llm.cache_dir).resolve())  # share model replies
    dest.mkdir(parents=True, exist_ok=True)
    if (root / "configs").is_dir():
        shutil.copytree(root / "configs", dest / "configs", dirs_exist_ok=True)
    for code in ("stages", "flows"):  # the project's own stages and flows, when it has them
        if (root / code / "__init__.py").is_file():
            _link(root / code, dest / code)
    for rel in (params.corpus.dir, params.qagen.qa_file, params.qagen.few_shot_file):
        if rel and not Path(rel).is_absolute() and (root / rel).exists():
            _link(root / rel, dest / rel)
    write_text(yaml.safe_dump(data, sort_keys=False), dest / catalog.DEFAULT_PARAMS_FILE)
    write_text(json.dumps(point, indent=2) + "\n", dest / "sweep_point.json")
    return dest


def _flatten(prefix: str, node: Any, out: dict[str, Any]) -> None:
    if isinstance(node, dict):
        for k, v in node.items():
            _flatten(f"{prefix}/{k}" if prefix else str(k), v, out)
    else:
        out[prefix] = node


def point_metrics(workspace: Path) -> dict[str, Any]:
    """Every retrieval metric (``chunking/embedder/retriever/measure``), how each
    (chunking, embedder) embedded chunks over the window (``chunking/embedder/long_chunks``:
    windowed, pooled, truncated or whole; ``.../over_window``: their share) and the top system."""
    from ragcourt.retrieval.long_chunks import read_stats

    out: dict[str, Any] = {}
    metrics = workspace / catalog.path("retrieval_metrics")
    if metrics.is_file():
        _flatten("", json.loads(metrics.read_text(encoding="utf-8")), out)
    for path in sorted(
        workspace.glob(str(catalog.path("embed_stats", chunking="*", embedder="*")))
    ):
        st = read_stats(path)
        out[f"{st.chunking}/{st.embedder}/long_chunks"] = st.handling
        out[f"{st.chunking}/{st.embedder}/over_window"] = round(st.share_over_window, 4)
    board = workspace / catalog.path("leaderboard")
    if board.is_file():
        top = pl.read_parquet(board).sort("rank").row(0, named=True)
        out["top_system"] = top["system"]
        out["top_elo"] = top["elo"]
    return out


def summary_frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    """One row per point; metric columns in a stable order; absent values null."""
    keys: dict[str, None] = {}
    for r in rows:
        keys.update(dict.fromkeys(r))
    return pl.from_dicts(rows, schema=None, infer_schema_length=None).select(list(keys))


@task(task_run_name="point {name}")
def run_point(name: str, workspace: str, params_path: str, until: str) -> dict[str, Any]:
    """Run the pipeline flow in the point's workspace as a child process (its own flow run,
    reported to the same Prefect API); fail with the tail of its output."""
    from prefect.settings import PREFECT_API_URL

    env = child_env(Path(workspace))  # its flows/ and stages/ (else the template's) importable
    if api := PREFECT_API_URL.value():  # the child reports to the API this flow uses
        env["PREFECT_API_URL"] = api
    cmd = [sys.executable, "-m", "flows", "pipeline", "--params", params_path, "--until", until]
    proc = subprocess.run(cmd, cwd=workspace, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise RagcourtError(f"sweep point {name} failed (exit {proc.returncode}):\n{tail}")
    return point_metrics(Path(workspace))


def dvc_exp_commands(grid: dict[str, list[Any]], until: str | None) -> Iterator[list[str]]:
    """``dvc exp run --queue -S key=value ... [target]`` for every grid point."""
    for p in grid_points(grid):
        sets = [a for k, v in p.items() for a in ("-S", f"{k}={json.dumps(v)}")]
        yield ["dvc", "exp", "run", "--queue", *sets, *([until] if until else [])]


def _dvc(args: list[str], root: Path) -> subprocess.CompletedProcess[str]:
    """``dvc <args>`` with this interpreter's DVC (no PATH lookup)."""
    return subprocess.run(
        [sys.executable, "-m", "dvc", *args], cwd=root, capture_output=True, text=True
    )


def queue_dvc_experiments(
    root: Path, grid: dict[str, list[Any]], until: str | None = None, run: bool = True
) -> list[list[str]]:
    """Queue one DVC experiment per grid point and, with ``run``, execute the queue (one job
    at a time) and wait for it. Returns the queued commands."""
    if until:
        selected_stages(until=until)
    cmds = list(dvc_exp_commands(grid, until))
    for cmd in cmds:
        proc = _dvc(cmd[1:], root)
        if proc.returncode != 0:
            raise RagcourtError(f"{' '.join(cmd)} failed: {proc.stderr.strip()[-500:]}")
    if run:
        proc = _dvc(["exp", "run", "--run-all", "--jobs", "1"], root)
        if proc.returncode != 0:
            raise RagcourtError(f"dvc exp run --run-all failed: {proc.stderr.strip()[-800:]}")
    return cmds
