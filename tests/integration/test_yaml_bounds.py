"""User YAML cannot expand without bound: "billion laughs" alias bombs in systems.yaml
(``init:`` or ``body:``), params.yaml, models.yaml and a profile are refused with one line
naming the file and line, quickly and in little memory; ``ragcourt run`` and ``ragcourt
doctor`` refuse a bombed params.yaml before DVC's own parser reads it. Real processes: the
memory bound is the child's peak RSS (``resource``), the time its wall clock."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from _tiny_project import ROOT, tool_env

from ragcourt.core.errors import ConfigError
from ragcourt.core.user_yaml import (
    MAX_YAML_DEPTH,
    AnchoredYamlLoader,
    load_user_yaml,
)


def lol_levels(levels: int = 9, key: str = "lol") -> str:
    """YAML mapping lines ``l0: &l0 [...]`` .. each level nine aliases of the previous one:
    ``levels`` = 9 expands to 9**9 (~387 million) strings."""
    lines = [f'{key}0: &{key}0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, levels):
        refs = ", ".join([f"*{key}{i - 1}"] * 9)
        lines.append(f"{key}{i}: &{key}{i} [{refs}]")
    return "\n".join(lines) + "\n"


def _indent(text: str, n: int) -> str:
    return "".join(" " * n + line + "\n" for line in text.splitlines())


def _bombed_systems(where: str) -> str:
    """A systems file whose python system's ``init`` or HTTP system's ``body`` is a bomb."""
    if where == "init":
        return (
            "systems:\n  - name: bomb\n    kind: python\n    callable: app:Bot\n    init:\n"
            + _indent(lol_levels(), 6)
        )
    return (
        "systems:\n  - name: bomb\n    kind: http\n    url: http://127.0.0.1:9/ask\n"
        "    answer_path: answer\n    body:\n      q: '{question}'\n" + _indent(lol_levels(), 6)
    )


def _project(tmp_path: Path) -> Path:
    params = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "models.yaml").write_text(
        (ROOT / "configs" / "models.yaml").read_text(encoding="utf-8"), encoding="utf-8"
    )
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params), encoding="utf-8")
    (tmp_path / "configs" / "systems.yaml").write_text(
        "systems:\n  - {name: s1, chunking: c256, embedder: minilm, retriever: bm25}\n",
        encoding="utf-8",
    )
    return tmp_path


def _cli(
    args: list[str], cwd: Path, timeout: int = 120
) -> tuple[subprocess.CompletedProcess[str], float, float]:
    """(process, wall seconds, peak RSS MB of the child) of ``ragcourt <args>`` in ``cwd``."""
    # VmHWM is this process image's own peak: getrusage's ru_maxrss survives fork + exec on
    # Linux, so a child of a test process that loaded models would report the parent's peak
    code = (
        "import runpy, sys; sys.argv = ['ragcourt', *sys.argv[1:]]\n"
        "def peak():\n"
        "    for ln in open('/proc/self/status'):\n"
        "        if ln.startswith('VmHWM:'):\n"
        "            return int(ln.split()[1]) // 1024\n"
        "try:\n    runpy.run_module('ragcourt.cli.main', run_name='__main__')\n"
        "finally:\n"
        "    print('PEAK_MB', peak(), file=sys.stderr)\n"
    )
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=cwd,
        env=tool_env() | {"COLUMNS": "60", "NO_COLOR": "1"},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    seconds = time.perf_counter() - t0
    peak = [ln for ln in proc.stderr.splitlines() if ln.startswith("PEAK_MB ")]
    assert peak, proc.stderr
    return proc, seconds, float(peak[-1].split()[1])


def _error_lines(proc: subprocess.CompletedProcess[str]) -> list[str]:
    return [ln for ln in proc.stderr.splitlines() if not ln.startswith("PEAK_MB ")]


# A process that expanded the bomb would need gigabytes; importing the CLI needs ~200 MB.
PEAK_MB_BOUND = 600


@pytest.mark.parametrize("where", ["init", "body"])
def test_systems_list_refuses_an_alias_bomb_fast_and_small(tmp_path: Path, where: str) -> None:
    """Old code: ``ragcourt systems list`` grew to 2.6 GB and died with a MemoryError."""
    project = _project(tmp_path)
    (project / "configs" / "systems.yaml").write_text(_bombed_systems(where), encoding="utf-8")
    proc, seconds, peak_mb = _cli(["systems", "list"], project)
    assert proc.returncode == 2, proc.stderr
    [line] = _error_lines(proc)
    expected_line = 6 if where == "init" else 8  # the line of `lol0: &lol0`
    assert f"configs/systems.yaml: line {expected_line}: " in line, line
    assert "anchor '&lol0' refused" in line, line
    assert "Traceback" not in proc.stderr
    assert peak_mb < PEAK_MB_BOUND and seconds < 60, (peak_mb, seconds)


def test_run_refuses_a_bombed_params_file_before_dvc_reads_it(tmp_path: Path) -> None:
    """DVC's parser expands aliases too: ``ragcourt run`` must stop before ``dvc repro``."""
    project = _project(tmp_path)
    text = (project / "params.yaml").read_text(encoding="utf-8")
    (project / "params.yaml").write_text(text + lol_levels(key="x"), encoding="utf-8")
    (project / "dvc.yaml").write_text((ROOT / "dvc.yaml").read_text(encoding="utf-8"))
    proc, seconds, peak_mb = _cli(["run"], project)
    assert proc.returncode == 2, proc.stderr
    [line] = _error_lines(proc)
    assert "params.yaml: line" in line and "anchor '&x0' refused" in line, line
    assert peak_mb < PEAK_MB_BOUND and seconds < 60, (peak_mb, seconds)
    assert not (project / "dvc.lock").exists()


def test_doctor_reports_a_bombed_params_file_and_skips_dvc(tmp_path: Path) -> None:
    project = _project(tmp_path)
    text = (project / "params.yaml").read_text(encoding="utf-8")
    (project / "params.yaml").write_text(text + lol_levels(key="x"), encoding="utf-8")
    proc, _, peak_mb = _cli(["doctor"], project, timeout=300)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "anchor '&x0' refused" in proc.stdout
    assert "not checked: params.yaml did not load" in proc.stdout
    assert peak_mb < PEAK_MB_BOUND


def test_models_file_refuses_aliases(tmp_path: Path) -> None:
    from ragcourt.core.model_registry import _load

    target = _project(tmp_path) / "configs" / "models.yaml"
    target.write_text(target.read_text(encoding="utf-8") + lol_levels(key="y"), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"models\.yaml: line \d+: invalid YAML: anchor '&y0'"):
        _load.__wrapped__(str(target))


def test_profile_refuses_aliases(tmp_path: Path) -> None:
    project = _project(tmp_path)
    target = project / "configs" / "profiles" / "bomb.yaml"
    target.parent.mkdir(parents=True)
    target.write_text("llm: {temperature: 0.5}\n" + lol_levels(key="y"), encoding="utf-8")
    proc, _, _ = _cli(["profile", "show", "bomb"], project)
    assert proc.returncode == 2, proc.stderr
    [line] = _error_lines(proc)
    assert "configs/profiles/bomb.yaml: line 2: " in line and "anchor '&y0' refused" in line


def test_prompt_files_may_use_anchors_but_a_bomb_is_bounded() -> None:
    """The prompt files inherit versions with ``<<: *v1``: allowed, expansion bounded."""
    for path in sorted((ROOT / "configs" / "prompts").glob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        assert load_user_yaml(text, path, loader=AnchoredYamlLoader) == yaml.safe_load(text)
    t0 = time.perf_counter()
    with pytest.raises(ConfigError, match=r"p\.yaml: line \d+: invalid YAML: expands to more"):
        load_user_yaml(lol_levels(), "p.yaml", loader=AnchoredYamlLoader)
    assert time.perf_counter() - t0 < 5


@pytest.mark.parametrize(
    "text",
    [
        "x: " + "[" * 5000 + "]" * 5000,
        "x:\n" + "".join("  " * i + f"k{i}:\n" for i in range(1, MAX_YAML_DEPTH + 5)),
        "x: " + "{a: " * 3000 + "1" + "}" * 3000,
    ],
)
def test_deep_nesting_is_one_line_not_a_recursion_error(text: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_user_yaml(text, "deep.yaml")
    assert str(info.value).startswith("deep.yaml: line ") and "nested deeper" in str(info.value)
