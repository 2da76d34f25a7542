"""dvc.yaml is generated from the stage graph: the committed file is exactly what
``ragcourt dvc generate`` writes, every stage runs its thin entry, args are quoted."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from ragcourt.orchestration import dvc_yaml
from ragcourt.orchestration.plan import STAGE_ORDER

ROOT = Path(__file__).resolve().parents[3]


def test_committed_dvc_yaml_is_the_generated_one() -> None:
    committed = (ROOT / "dvc.yaml").read_text(encoding="utf-8")
    assert committed == dvc_yaml.render(ROOT), "dvc.yaml is stale: run `ragcourt dvc generate`"


def test_one_name_per_stage_and_quoted_interpolations() -> None:
    stages = yaml.safe_load(dvc_yaml.render(ROOT))["stages"]
    assert list(stages) == list(STAGE_ORDER)
    for name, body in stages.items():
        cmd = (body.get("do") or body)["cmd"]
        assert cmd.startswith(f"python -m stages.{name}"), name
        for word in cmd.split()[3:]:
            if "${" in word:
                assert word.startswith("'") and word.endswith("'"), (name, word)


def test_code_deps_are_package_folders_and_the_entry() -> None:
    stages = yaml.safe_load(dvc_yaml.render(ROOT))["stages"]
    deps = stages["judge"]["deps"]
    assert "stages/judge.py" in deps and "ragcourt/judging" in deps and "ragcourt/llm" in deps
    assert not any(
        d.endswith(".py") and d.startswith("ragcourt/") and d != "ragcourt/__init__.py"
        for d in deps
    )
    assert "__pycache__/" in (ROOT / ".dvcignore").read_text()


def test_no_stage_depends_on_its_own_outputs(tmp_path: Path) -> None:
    """With a shuffled control (it reads its base system's partition inside the answer stage's
    own output folder) no stage may depend on its own outputs."""
    shutil.copytree(ROOT / "configs", tmp_path / "configs")
    shutil.copytree(ROOT / "stages", tmp_path / "stages")
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    params["controls"]["kinds"] = ["oracle", "random", "none", "shuffled"]
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    stages = yaml.safe_load(dvc_yaml.render(tmp_path))["stages"]
    for name, body in stages.items():
        body = body.get("do") or body
        outs = [o if isinstance(o, str) else next(iter(o)) for o in body.get("outs", [])]
        for dep in body["deps"]:
            assert not any(dep == o or dep.startswith(o + "/") for o in outs), (name, dep)
