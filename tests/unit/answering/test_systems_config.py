"""Systems file: validation errors, grid expansion, retrieval-key grouping (answering/systems)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import yaml

from ragcourt.answering.grids import factor_label
from ragcourt.answering.systems import (
    CandidateSystem,
    System,
    builtin_systems,
    group_by_retrieval,
    load_systems,
    parse_systems,
)
from ragcourt.core.errors import ConfigError
from ragcourt.orchestration.params import Params, load_params

ROOT = Path(__file__).resolve().parents[3]
PROMPTS = ROOT / "configs" / "prompts"


@pytest.fixture(scope="module")
def params() -> Params:
    """The shipped params without control systems (these tests are about the systems file)."""
    p = load_params(ROOT / "params.yaml")
    p.controls.kinds = []
    return p


def builtin(systems: Sequence[CandidateSystem]) -> list[System]:
    """``systems``, every one of them built-in (an external or shuffled one fails the test)."""
    out = builtin_systems(systems)
    assert len(out) == len(systems)
    return out


def parse(data: Any, params: Params, source: str = "sys.yaml") -> list[System]:
    return builtin(parse_systems(data, params, source, check_models=False, prompts_dir=PROMPTS))


def one(**kw: Any) -> dict[str, Any]:
    return {"name": "s1", "chunking": "c256", "embedder": "minilm", "retriever": "dense", **kw}


def test_demo_config_loads_with_resolved_defaults(params: Params) -> None:
    systems = builtin(
        load_systems(params, ROOT / "configs/systems.yaml", check_models=False, prompts_dir=PROMPTS)
    )
    names = [s.name for s in systems]
    assert names == ["dense-k3", "dense-k1", "bm25-k3", "hybrid-k3", "dense-k3-135m"]
    assert len(set(names)) == len(names) >= 4
    by = {s.name: s for s in systems}
    assert {s.generator_model for s in systems if s.name != "dense-k3-135m"} == {
        "local/qwen2.5-coder-0.5b"
    }
    assert by["dense-k3-135m"].generator_model == "local/smollm2-135m"
    assert {s.spec.prompt_version for s in systems} == {"v2-short"}
    assert by["bm25-k3"].spec.embedder is None  # BM25 ignores the embedder
    assert by["dense-k1"].spec.top_k == 1 and by["dense-k3"].spec.top_k == 3
    # dense-k1 and dense-k3 rank identically to depth 10: one shared retrieval
    assert by["dense-k1"].retrieval == by["dense-k3"].retrieval


def test_dice_grid_expands_to_eight_readable_names(params: Params) -> None:
    p = params.model_copy(deep=True)
    p.embedders = {
        **p.embedders,
        "mpnet": p.embedders["minilm"].model_copy(update={"model": "all-mpnet-base-v2"}),
    }
    systems = builtin(
        load_systems(p, ROOT / "configs/systems_dice.yaml", check_models=False, prompts_dir=PROMPTS)
    )
    assert [s.name for s in systems] == [
        "dice-minilm-c256-large",
        "dice-minilm-c256-small",
        "dice-minilm-c512-large",
        "dice-minilm-c512-small",
        "dice-mpnet-c256-large",
        "dice-mpnet-c256-small",
        "dice-mpnet-c512-large",
        "dice-mpnet-c512-small",
    ]
    s = systems[2]
    assert (s.spec.embedder, s.spec.chunking, s.generator_model) == (
        "minilm",
        "c512",
        "openai/gpt-4o-mini",
    )
    assert systems[3].generator_model == p.llm.model
    # the large/small pair of each (embedder, chunking) shares one retrieval
    assert len(group_by_retrieval(systems)) == 4


def test_race_grid_expands_to_sixteen_demo_configurations(params: Params) -> None:
    systems = builtin(
        load_systems(
            params, ROOT / "configs/systems_race16.yaml", check_models=False, prompts_dir=PROMPTS
        )
    )
    assert len(systems) == 16 == len({s.name for s in systems})
    assert {s.generator_model for s in systems} == {
        "local/qwen2.5-coder-0.5b",
        "local/smollm2-135m",
    }
    assert {(s.spec.chunking, s.spec.retriever, s.spec.top_k) for s in systems} == {
        (c, r, k) for c in ("c256", "c512") for r in ("dense", "bm25") for k in (1, 3)
    }


def test_grid_labels_and_name_template(params: Params) -> None:
    data = {
        "defaults": {"chunking": "c256", "embedder": "minilm"},
        "grids": [
            {
                "name": "{retriever}-{top_k}-{fusion}",
                "factors": {
                    "retriever": ["dense", "hybrid"],
                    "top_k": [1, 5],
                    "fusion": [False, {"n_variants": 3}],
                },
            }
        ],
    }
    names = [s.name for s in parse(data, params)]
    assert names[:4] == [
        "dense-k1-nofusion",
        "dense-k1-fusion3",
        "dense-k5-nofusion",
        "dense-k5-fusion3",
    ]
    assert len(names) == 8
    assert factor_label("generator", "openai/gpt-4o-mini") == "gpt-4o-mini"
    assert factor_label("generator", None) == "default"
    assert factor_label("max_tokens", 64) == "max_tokens64"


@pytest.mark.parametrize(
    ("system", "needle"),
    [
        (one(chunking="c999"), "unknown chunking 'c999'"),
        (one(embedder="e5"), "unknown embedder 'e5'"),
        (one(retriever="splade"), "key 'retriever'"),
        (one(retriever="hybrid", embedder=None), "needs an embedder"),
        (one(name="a/b"), "key 'name'"),
        (one(top_k=0), "key 'top_k'"),
        (one(colour="red"), "key 'colour': unknown key"),
        (one(prompt_version="v9"), "no prompt 'answer_system' in version 'v9'"),
        (one(fusion={"n_variants": 4, "prompt_version": "v7"}), "version 'v7'"),
    ],
)
def test_bad_system_names_system_and_file(
    params: Params, system: dict[str, Any], needle: str
) -> None:
    with pytest.raises(ConfigError) as err:
        parse({"systems": [system]}, params, "cfg/my_systems.yaml")
    msg = str(err.value)
    assert needle in msg
    assert msg.startswith("cfg/my_systems.yaml: ")
    if system.get("name") == "s1":
        assert "system 's1'" in msg


def test_unknown_chunking_in_grid_names_the_expanded_system(params: Params) -> None:
    data = {
        "grids": [
            {
                "prefix": "g",
                "base": {"embedder": "minilm", "retriever": "dense"},
                "factors": {"chunking": ["c256", "c1024"]},
            }
        ]
    }
    with pytest.raises(ConfigError, match=r"system 'g-c1024': unknown chunking 'c1024'"):
        parse(data, params)


def test_duplicate_system_names(params: Params) -> None:
    with pytest.raises(ConfigError, match="duplicate system name 's1'"):
        parse({"systems": [one(), one(top_k=3)]}, params)
    grid = {
        "prefix": "s1",
        "base": {"chunking": "c256", "embedder": "minilm"},
        "factors": {"retriever": ["dense"]},
    }
    with pytest.raises(ConfigError, match="duplicate system name 's1-dense'"):
        parse({"systems": [one(name="s1-dense", top_k=2)], "grids": [grid]}, params)


def test_duplicate_yaml_key_is_an_error(params: Params, tmp_path: Path) -> None:
    f = tmp_path / "systems.yaml"
    f.write_text("systems:\n  - name: a\n    retriever: dense\n    retriever: bm25\n")
    with pytest.raises(ConfigError, match=r"systems.yaml: line 4: duplicate key 'retriever'"):
        load_systems(params, f, check_models=False, prompts_dir=PROMPTS)


def test_identical_configurations_are_an_error(params: Params) -> None:
    data = {
        "grids": [
            {
                "base": {"chunking": "c256", "retriever": "bm25"},
                "factors": {"embedder": ["minilm", "mpnet"]},
            }
        ]
    }
    with pytest.raises(ConfigError, match="'minilm' and 'mpnet' have the same configuration"):
        parse(data, params)


def test_default_generator_spelled_out_or_null_is_the_same_configuration(params: Params) -> None:
    default = params.llm.model
    with pytest.raises(ConfigError, match="'s1' and 's2' have the same configuration"):
        parse({"systems": [one(generator=None), one(name="s2", generator=default)]}, params)
    fus_null = one(fusion={"n_variants": 2})
    fus_default = one(name="s2", fusion={"n_variants": 2, "model": default})
    with pytest.raises(ConfigError, match="'s1' and 's2' have the same configuration"):
        parse({"systems": [fus_null, fus_default]}, params)
    other = one(name="s2", generator="openai/gpt-4o-mini")
    assert len(parse({"systems": [one(), other]}, params)) == 2


def test_fusion_prompt_version_needs_variants_system_too(params: Params, tmp_path: Path) -> None:
    prompts = yaml.safe_load((PROMPTS / "answer.yaml").read_text())
    v2 = dict(prompts["v1"])
    del v2["variants_system"]
    (tmp_path / "answer.yaml").write_text(yaml.safe_dump({"v1": prompts["v1"], "v2": v2}))
    system = one(fusion={"n_variants": 2, "prompt_version": "v2"})
    with pytest.raises(ConfigError, match=r"system 's1': .*no prompt 'variants_system' in .*'v2'"):
        parse_systems({"systems": [system]}, params, "s.yaml", check_models=False,
                      prompts_dir=tmp_path)  # fmt: skip


@pytest.mark.parametrize(
    ("grid", "needle"),
    [
        ({"factors": {}}, "at least one factor"),
        ({"factors": {"colour": ["red"]}}, "unknown factor 'colour'"),
        ({"factors": {"top_k": []}}, "factor 'top_k' has no levels"),
        ({"factors": {"top_k": 5}}, "must be a list or a label -> value mapping"),
        ({"factors": {"generator": ["a/m", "b/m"]}}, "same label ['m']"),
        ({"name": "{size}", "factors": {"top_k": [1, 2]}}, "refers to 'size'"),
        ({"base": {"name": "x"}, "factors": {"top_k": [1]}}, "may not set a name"),
        ({"factors": {"top_k": [1, 2]}, "levels": 3}, "key 'grids.0.levels': unknown key"),
    ],
)
def test_bad_grid(params: Params, grid: dict[str, Any], needle: str) -> None:
    data = {
        "defaults": {"chunking": "c256", "embedder": "minilm", "retriever": "dense"},
        "grids": [grid],
    }
    with pytest.raises(ConfigError) as err:
        parse(data, params)
    assert needle in str(err.value)


def test_empty_and_malformed_files(params: Params) -> None:
    with pytest.raises(ConfigError, match="no systems declared"):
        parse({"systems": []}, params)
    with pytest.raises(ConfigError, match="top level must be a mapping"):
        parse([one()], params)
    with pytest.raises(ConfigError, match="key 'system': unknown key"):
        parse({"system": [one()]}, params)
    with pytest.raises(ConfigError, match="systems file not found"):
        load_systems(params, "nowhere.yaml")


def test_fusion_shorthand(params: Params) -> None:
    on, off = parse(
        {"systems": [one(name="on", fusion=True), one(name="off", fusion=False)]}, params
    )
    assert on.spec.fusion is not None and on.spec.fusion.n_variants == 4
    assert off.spec.fusion is None and off.retrieval.fusion_variants == 0


def test_retrieval_grouping(params: Params) -> None:
    systems = parse(
        {
            "systems": [
                one(name="a", generator="openai/gpt-4o-mini"),
                one(name="b"),  # differs from a only in the generator
                one(name="c", top_k=3),  # top_k <= depth: same ranking, first 3 kept
                one(name="d", top_k=20),  # deeper than retrieval.depth: own ranking
                one(name="e", fusion=True),  # RAG-Fusion: own ranking
                one(name="f", fusion=True, generator="openai/gpt-4o-mini"),  # shares e's variants
            ]
        },
        params,
    )
    groups = [[s.name for s in g] for g in group_by_retrieval(systems).values()]
    assert groups == [["a", "b", "c"], ["d"], ["e", "f"]]
    assert systems[3].retrieval.depth == 20 and systems[0].retrieval.depth == params.retrieval.depth


def test_unknown_local_model_is_checked_against_registry(params: Params, tmp_path: Path) -> None:
    reg = tmp_path / "models.yaml"
    reg.write_text(
        yaml.safe_dump(
            {"llms": {"smollm2-135m": {"source": "path", "path": "x.gguf", "sha256": "0" * 64}}}
        )
    )
    p = params.model_copy(deep=True)
    p.llm.models_file = str(reg)
    ok = parse_systems(
        {"systems": [one(generator="local/smollm2-135m")]}, p, "s.yaml", prompts_dir=PROMPTS
    )
    assert ok[0].generator_model == "local/smollm2-135m"
    with pytest.raises(ConfigError, match=r"system 's1': local model 'local/tiny' is not in"):
        parse_systems({"systems": [one(generator="local/tiny")]}, p, "s.yaml", prompts_dir=PROMPTS)


def test_a_grid_product_over_the_cap_is_one_line_before_expansion(params: Params) -> None:
    """A few KB of factors whose product is 10^9 systems is refused from the level counts
    alone (no expansion, no MemoryError), naming the product and the param."""
    import time

    levels = {f"l{i}": i for i in range(1000)}
    data = {
        "defaults": {"chunking": "c256", "embedder": "minilm", "retriever": "dense"},
        "grids": [{"factors": {"top_k": levels, "prompt_version": levels, "max_tokens": levels}}],
    }
    t0 = time.perf_counter()
    with pytest.raises(ConfigError) as err:
        parse(data, params)
    assert time.perf_counter() - t0 < 5
    msg = str(err.value)
    assert "1,000,000,000 systems" in msg and "limits.max_systems (1,000)" in msg
    assert "\n" not in msg


def test_grids_adding_up_past_the_cap_are_refused(params: Params) -> None:
    small = params.model_copy(deep=True)
    small.limits.max_systems = 5
    grid = {"factors": {"top_k": [1, 2, 3]}}
    data = {
        "defaults": {"chunking": "c256", "embedder": "minilm", "retriever": "dense"},
        "grids": [{**grid, "prefix": "a"}, {**grid, "prefix": "b"}],
    }
    with pytest.raises(ConfigError, match=r"6 systems, over limits.max_systems \(5\)"):
        parse(data, small)
