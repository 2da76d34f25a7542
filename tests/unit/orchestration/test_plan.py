"""The Prefect flow's stage graph: partitions, dependencies, selection, and agreement with the
outputs dvc.yaml declares (both engines must write the same files)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from ragcourt.core.catalog import CODE_DIGESTS
from ragcourt.core.errors import ConfigError
from ragcourt.orchestration.params import Params, load_params
from ragcourt.orchestration.plan import build_plan, plan_for
from ragcourt.orchestration.stage_graph import CODE_STEP, selected_stages, stage_graph, stage_order

ROOT = Path(__file__).resolve().parents[3]
SYSTEMS = [("dense-k5", "c256", "minilm"), ("bm25-k5", "c512", None)]


@pytest.fixture
def params() -> Params:
    return Params.model_validate(
        {
            "chunkings": {
                "c256": {"size": 256, "overlap": 32},
                "c512": {"size": 512, "overlap": 64},
            },
            "embedders": {"minilm": {"model": "all-minilm-l6-v2"}, "mpnet": {"model": "x"}},
            "qagen": {"reference_chunking": "c512"},
        }
    )


def test_one_task_per_partition(params: Params) -> None:
    plan = build_plan(params, SYSTEMS)
    assert plan.ids_of("chunk") == ("chunk[c256]", "chunk[c512]")
    assert plan.ids_of("embed") == (
        "embed[c256,minilm]",
        "embed[c256,mpnet]",
        "embed[c512,minilm]",
        "embed[c512,mpnet]",
    )
    assert plan.ids_of("answer") == ("answer[dense-k5]", "answer[bm25-k5]", "answer[combine]")
    assert plan.ids_of("judge") == ("judge",)
    assert plan.ids_of("judge_retrieval") == ("judge_retrieval",)
    assert plan.ids_of("judge_summary") == ("judge_summary",)
    assert [c.call_kwargs for c in plan.by_stage("answer")] == [
        {"systems": ["dense-k5"]},
        {"systems": ["bm25-k5"]},
        {},
    ]


def test_dependencies_point_backwards_and_follow_data(params: Params) -> None:
    plan = build_plan(params, SYSTEMS)
    seen: set[str] = set()
    for call in plan.calls:
        assert set(call.after) <= seen, call.id
        seen.add(call.id)
    by_id = {c.id: c for c in plan.calls}
    # each system waits for the indexes of its chunking; BM25 needs no embedding
    # (`after` lists the nearest producers only: embed[c256,minilm] already waits for chunk[c256])
    assert set(by_id["answer[dense-k5]"].after) == {"qagen", "bm25[c256]", "embed[c256,minilm]"}
    # c512 is the reference chunking, so qagen already waits for chunk[c512]
    assert set(by_id["answer[bm25-k5]"].after) == {"qagen", "bm25[c512]"}
    assert "data/bm25/c512" in by_id["answer[bm25-k5]"].inputs
    assert "data/chunks/c512.parquet" in by_id["answer[bm25-k5]"].inputs
    assert "data/index/c256__minilm.faiss" in by_id["answer[dense-k5]"].inputs
    # qagen reads the reference chunking only
    # (and for the hosted-model routes record, which every model-calling stage reads)
    assert by_id["qagen"].after == ("llm_routes", "chunk[c512]")  # chunk waits for ingest
    assert set(by_id["answer[combine]"].after) == {"answer[dense-k5]", "answer[bm25-k5]"}
    assert set(by_id["tournament"].after) == {"judge"}  # judge waits for answer[combine]
    # every input that some call produces is produced by a call it (transitively) waits for
    producer = {o: c.id for c in plan.calls for o in c.outputs}

    def upstream(cid: str) -> set[str]:
        out: set[str] = set()
        todo = list(by_id[cid].after)
        while todo:
            a = todo.pop()
            if a not in out:
                out.add(a)
                todo.extend(by_id[a].after)
        return out

    for call in plan.calls:
        for path in call.inputs:
            if path in producer:
                assert producer[path] in upstream(call.id), (call.id, path)


def test_bring_your_own_qa_skips_reference_chunk_dependency() -> None:
    p = Params.model_validate({"qagen": {"qa_file": "my_qa.jsonl", "reference_chunking": "zz"}})
    qagen = build_plan(p, []).by_stage("qagen")[0]
    assert qagen.after == ("llm_routes", "ingest")
    assert "my_qa.jsonl" in qagen.inputs


def test_select_until_and_only(params: Params) -> None:
    plan = build_plan(params, SYSTEMS)
    until = plan.select(until="embed")
    assert {c.stage for c in until.calls} == {"ingest", "chunk", "bm25", "embed"}
    only = plan.select(only=["report"])
    assert only.ids == ["report"] and only.calls[0].after == ()
    assert selected_stages() == list(stage_order())
    with pytest.raises(ConfigError, match="unknown stage 'embedding'"):
        plan.select(until="embedding")
    with pytest.raises(ConfigError, match="either 'until' or 'only'"):
        selected_stages(until="embed", only=["ingest"])


def test_plan_for_reads_systems_only_when_needed(params: Params, tmp_path: Path) -> None:
    params.systems_file = str(tmp_path / "nowhere.yaml")
    assert plan_for(params, until="retrieval_eval").ids_of("answer") == ()
    assert plan_for(params, only=["judge", "tournament", "report"]).ids_of("answer") == ()
    with pytest.raises(ConfigError):
        plan_for(params)


def _dvc_outs() -> set[str]:
    """Every out/metric path of the repository's dvc.yaml, resolved by DVC itself."""
    from dvc.repo import Repo

    outs: set[str] = set()
    with Repo(str(ROOT)) as repo:
        for stage in repo.index.stages:
            for out in stage.outs:
                outs.add(Path(out.fs_path).relative_to(ROOT).as_posix())
    return outs


def test_flow_outputs_match_dvc_yaml() -> None:
    """Each file the flow's calls write is a DVC out (or inside one), and each DVC out is
    written by some call (LLM accounting files excepted: the gateway writes those; and the
    code digests, which only DVC reads)."""
    if not (ROOT / "dvc.yaml").is_file():
        pytest.skip("no dvc.yaml in the repository")
    params = load_params(ROOT / "params.yaml")
    systems = yaml.safe_load((ROOT / params.systems_file).read_text()).get("systems", [])
    plan = build_plan(params, [(s["name"], "c256", "minilm") for s in systems])
    flow_outs = set(plan.outputs())
    dvc_outs = _dvc_outs()

    def covered(path: str, by: set[str]) -> bool:
        return any(path == o or path.startswith(o + "/") or o.startswith(path + "/") for o in by)

    assert [o for o in sorted(flow_outs) if not covered(o, dvc_outs)] == []
    accounting = {o for o in dvc_outs if o.startswith(params.llm.metrics_dir + "/")}
    dvc_only = accounting | {CODE_DIGESTS}  # the code step's digests: DVC's code dependency
    assert [o for o in sorted(dvc_outs - dvc_only) if not covered(o, flow_outs)] == []


def _dvc_stage_deps() -> list[tuple[str, str, list[str], list[tuple[str, str]]]]:
    """``(stage, cmd, dep paths, (params file, key) pairs)`` of every resolved DVC stage."""
    from dvc.repo import Repo

    out = []
    with Repo(str(ROOT)) as repo:
        for stage in repo.index.stages:
            paths = [d.def_path for d in stage.deps if type(d).__name__ != "ParamsDependency"]
            keys = [
                (d.def_path, key)
                for d in stage.deps
                if type(d).__name__ == "ParamsDependency"
                for key in d.params
            ]
            out.append((stage.addressing, stage.cmd, paths, keys))
    return out


def test_dvc_yaml_deps_cover_each_stages_code_and_model_sections() -> None:
    """Editing any module a stage imports, or its declaration, changes its key in the code
    digests, which the stage tracks as a param, and the ``code`` step that writes them reads
    the whole package and stages/; the model registry file is a dep where it resolves models.
    So DVC re-runs it as Prefect does (whose key hashes the same digest and registry file)."""
    if not (ROOT / "dvc.yaml").is_file():
        pytest.skip("no dvc.yaml in the repository")
    params = load_params(ROOT / "params.yaml")
    systems = yaml.safe_load((ROOT / params.systems_file).read_text()).get("systems", [])
    plan = build_plan(params, [(s["name"], "c256", "minilm") for s in systems])
    for call in plan.calls:  # the flow hashes the whole registry file of such calls
        if call.models_keys:
            assert params.llm.models_file in call.inputs, call.id
    problems: list[str] = []
    for name, cmd, deps, params_deps in _dvc_stage_deps():
        if name == CODE_STEP:
            assert sorted(deps) == ["ragcourt", "stages"], deps
            continue
        m = re.fullmatch(r"python -m stages (\w+)", cmd)
        assert m, f"{name}: unexpected cmd {cmd!r}"
        stage = m.group(1)
        if (CODE_DIGESTS, stage) not in params_deps:
            problems.append(f"{name}: its code digest {CODE_DIGESTS}:{stage} is not a param")
        calls = plan.by_stage(stage)
        assert calls, f"{name}: no flow call runs stage {stage}"
        if any(c.models_keys for c in calls) and params.llm.models_file not in deps:
            problems.append(f"{name}: the model registry {params.llm.models_file} is not a dep")
    assert problems == []


def test_every_stage_writes_exactly_its_catalog_artifacts() -> None:
    """The catalog's producing stage and the stage declarations agree, and every declared
    stage's function can be loaded."""
    from ragcourt.core import catalog

    for sd in stage_graph().values():
        assert set(sd.writes) == {a.name for a in catalog.produced_by(sd.name)}, sd.name
        assert callable(sd.load()), sd.function


def test_with_upstream_is_the_stages_a_stage_reads_in_run_order() -> None:
    """The race flow runs the race and what it reads: not answer, judge or the tournament."""
    from ragcourt.orchestration.stage_graph import stage_order, with_upstream

    names = with_upstream(["race"])
    assert names[-1] == "race" and {"ingest", "chunk", "embed", "qagen", "llm_routes"} <= set(names)
    assert not {"answer", "judge", "tournament", "report"} & set(names)
    order = stage_order()
    assert names == sorted(names, key=order.index)
    assert with_upstream(["chunk"]) == ["ingest", "chunk"]
