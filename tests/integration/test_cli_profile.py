"""``ragcourt profile list|show|apply``, ``run --profile`` and the doctor's profile check, on a
tiny project in a temp folder (real params files, the shipped profile, real model registry)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from _tiny_project import make_project
from typer.testing import CliRunner

from ragcourt.cli.doctor import check_profiles
from ragcourt.cli.main import app
from ragcourt.orchestration.params import load_params
from ragcourt.orchestration.profiles import load_overlay

runner = CliRunner()


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    make_project(tmp_path)
    (tmp_path / "configs/profiles/judges-small.yaml").write_text(
        "qagen: {filter_model: local/smollm2-135m, thresholds: {answerability: 0.4}}\n"
        "judge: {udcg: {model: local/smollm2-135m}}\n",
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_profile_list_show_apply(project: Path) -> None:
    res = runner.invoke(app, ["profile", "list"])
    assert res.exit_code == 0
    assert "judges-small\n" in res.output and "offline-quality" in res.output
    res = runner.invoke(app, ["profile", "show", "judges-small"])
    assert res.exit_code == 0 and "answerability: 0.4" in res.output
    res = runner.invoke(app, ["profile", "apply", "judges-small"])
    assert res.exit_code == 0, res.output
    assert "3 keys set in params.yaml" in res.output
    p = load_params("params.yaml")
    assert p.qagen.thresholds.answerability == 0.4 and p.judge.udcg.model == "local/smollm2-135m"
    assert "judges-small (active)" in runner.invoke(app, ["profile", "list"]).output
    again = runner.invoke(app, ["profile", "apply", "judges-small"])
    assert "nothing changed" in again.output


def test_profile_errors_are_one_line_exit_2(project: Path) -> None:
    before = (project / "params.yaml").read_text()
    res = runner.invoke(app, ["profile", "apply", "nope"])
    assert res.exit_code == 2
    assert "unknown profile 'nope'" in res.output and "offline-quality" in res.output
    (project / "configs/profiles/bad.yaml").write_text("tournament: {modle: x}\n")
    res = runner.invoke(app, ["profile", "apply", "bad"])
    assert res.exit_code == 2
    assert "bad.yaml: key 'tournament.modle' is not a params key" in " ".join(res.output.split())
    assert (project / "params.yaml").read_text() == before


def test_run_profile_applies_before_running(project: Path) -> None:
    # an unknown stage stops the run after the profile was written and before DVC starts
    res = runner.invoke(app, ["run", "--profile", "judges-small", "--until", "no_such_stage"])
    assert res.exit_code == 2, res.output
    assert "profile judges-small: 3 keys set" in res.output
    assert load_params("params.yaml").qagen.filter_model == "local/smollm2-135m"
    res = runner.invoke(app, ["run", "--profile", "nope"])
    assert res.exit_code == 2 and "unknown profile 'nope'" in res.output


def test_doctor_says_which_profile_is_active_and_if_its_models_are_installed(
    project: Path,
) -> None:
    checks = {c.name: c for c in check_profiles(Path("params.yaml"), project)}
    small = checks["profile judges-small"]
    assert small.status == "ok" and small.detail.startswith("not active")
    assert "smollm2-135m" in small.detail
    runner.invoke(app, ["profile", "apply", "judges-small"])
    checks = {c.name: c for c in check_profiles(Path("params.yaml"), project)}
    assert checks["profile judges-small"].detail.startswith("active")
    # a profile naming a model whose package is absent: a warning with the install hint
    models = yaml.safe_load((project / "configs/models.yaml").read_text())
    models["llms"]["absent-model"] = models["llms"]["smollm2-135m"] | {
        "package": "no_such_package_xyz",
        "install_hint": "pip install absent",
    }
    # (a new registry file: the registry is memoised per path)
    (project / "configs/models_absent.yaml").write_text(yaml.safe_dump(models))
    (project / "configs/profiles/absent.yaml").write_text(
        "llm: {models_file: configs/models_absent.yaml}\ntournament: {model: local/absent-model}\n"
    )
    checks = {c.name: c for c in check_profiles(Path("params.yaml"), project)}
    assert checks["profile absent"].status == "warn"
    assert "pip install absent" in checks["profile absent"].detail
    quality = checks["profile offline-quality"]
    judge_model = load_overlay("offline-quality", project)["judge"]["udcg"]["model"]
    assert judge_model.removeprefix("local/") in quality.detail
