"""dvc.yaml is generated from the stage graph: the committed file is exactly what
``ragcourt dvc generate`` writes, every stage runs the generic stage entry, its code dependency
is its key of the code digests, a user's QA file is a dep when params set it."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from ragcourt.core.catalog import CODE_DIGESTS
from ragcourt.orchestration import dvc_yaml
from ragcourt.orchestration.code_deps import code_digests
from ragcourt.orchestration.stage_graph import CODE_STEP, stage_order

ROOT = Path(__file__).resolve().parents[3]


def test_committed_dvc_yaml_is_the_generated_one() -> None:
    committed = (ROOT / "dvc.yaml").read_text(encoding="utf-8")
    assert committed == dvc_yaml.render(ROOT), "dvc.yaml is stale: run `ragcourt dvc generate`"


def test_every_stage_runs_the_generic_entry_without_params_in_the_command() -> None:
    stages = yaml.safe_load(dvc_yaml.render(ROOT))["stages"]
    assert list(stages) == [CODE_STEP, *stage_order()]
    for name, body in stages.items():
        assert (body.get("do") or body)["cmd"] == f"python -m stages {name}", name


def test_each_stage_tracks_its_own_code_digest_and_no_code_folder() -> None:
    """A stage's code dependency is its own key of the digests file (the files its function
    imports), which the ``code`` step writes from stages/ and the package source."""
    stages = yaml.safe_load(dvc_yaml.render(ROOT))["stages"]
    code = stages.pop(CODE_STEP)
    assert code["deps"] == ["stages", "ragcourt"]
    assert code["outs"] == [{CODE_DIGESTS: {"cache": False}}]
    for name, body in stages.items():
        body = body.get("do") or body
        assert {CODE_DIGESTS: [name]} in body["params"], name
        assert not any(d.startswith(("ragcourt", "stages")) for d in body.get("deps", [])), name
    digests = code_digests(ROOT)
    assert list(digests) == list(stage_order())
    assert all(len(d) == 64 for d in digests.values())


def _qagen_deps(root: Path, **qagen: str | None) -> list[str]:
    shutil.copytree(ROOT / "configs", root / "configs", dirs_exist_ok=True)
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    params["qagen"] |= qagen
    (root / "params.yaml").write_text(yaml.safe_dump(params))
    deps: list[str] = yaml.safe_load(dvc_yaml.render(root))["stages"]["qagen"]["deps"]
    return deps


def test_a_users_qa_file_is_a_dependency_of_qagen_when_set(tmp_path: Path) -> None:
    deps = _qagen_deps(tmp_path, qa_file="my_qa.jsonl", few_shot_file="shots.jsonl")
    assert "my_qa.jsonl" in deps and "shots.jsonl" in deps
    deps = _qagen_deps(tmp_path, qa_file=None, few_shot_file=None)
    assert not any("qa_file" in d or "few_shot_file" in d for d in deps)


def test_no_stage_depends_on_its_own_outputs(tmp_path: Path) -> None:
    """With a shuffled control (it reads its base system's partition inside the answer stage's
    own output folder) no stage may depend on its own outputs."""
    shutil.copytree(ROOT / "configs", tmp_path / "configs")
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    params["controls"]["kinds"] = ["oracle", "random", "none", "shuffled"]
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    stages = yaml.safe_load(dvc_yaml.render(tmp_path))["stages"]
    for name, body in stages.items():
        body = body.get("do") or body
        outs = [o if isinstance(o, str) else next(iter(o)) for o in body.get("outs", [])]
        for dep in body.get("deps", []):
            assert not any(dep == o or dep.startswith(o + "/") for o in outs), (name, dep)


def test_a_key_the_params_file_leaves_out_is_tracked_through_its_written_section() -> None:
    """DVC refuses a params key missing from params.yaml: such a key becomes its nearest
    written section, or is dropped when none is written; a key inside a kept one is not
    listed twice."""
    from ragcourt.orchestration.dvc_yaml import _as_written

    written = {"retrieval", "retrieval.depth", "llm", "llm.model"}
    keys = ["retrieval.bm25", "retrieval.depth", "llm.model", "stage_params.mine", "c.{x}.size"]
    assert _as_written(keys, written.__contains__) == ["retrieval", "llm.model", "c.{x}.size"]
    assert _as_written(keys, None) == keys
