"""Params profiles (ragcourt.orchestration.profiles): the overlay merge, key validation, apply
and the active check, on real params files in a temp folder and on the shipped profile."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from ragcourt.core.errors import ConfigError, ParamsError
from ragcourt.orchestration.params import load_params
from ragcourt.orchestration.profiles import (
    active_profiles,
    apply_profile,
    check_overlay_keys,
    deep_merge,
    is_active,
    load_overlay,
    merged_params,
    profile_names,
)

ROOT = Path(__file__).resolve().parents[3]


def _project(tmp_path: Path, overlay: str, name: str = "p") -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "params.yaml", tmp_path / "params.yaml")
    (tmp_path / "configs/profiles").mkdir(parents=True)
    (tmp_path / f"configs/profiles/{name}.yaml").write_text(overlay, encoding="utf-8")
    return tmp_path


def test_deep_merge_merges_mappings_and_replaces_everything_else() -> None:
    base: dict[str, Any] = {"a": {"b": 1, "c": [1, 2], "d": {"e": 1}}, "f": 2}
    over = {"a": {"c": [3], "d": {"g": None}}, "h": {"i": 1}}
    assert deep_merge(base, over) == {
        "a": {"b": 1, "c": [3], "d": {"e": 1, "g": None}},
        "f": 2,
        "h": {"i": 1},
    }
    assert base["a"]["d"] == {"e": 1}  # inputs untouched


def test_overlay_keys_must_be_params_keys() -> None:
    check_overlay_keys({"judge": {"judges": {"any_name": {"model": "x"}}}}, "f.yaml")
    check_overlay_keys({"qagen": {"thresholds": {"answerability": 0.3}}}, "f.yaml")
    with pytest.raises(ConfigError, match=r"^f\.yaml: key 'judge\.udcg\.modle' is not a params"):
        check_overlay_keys({"judge": {"udcg": {"modle": "x"}}}, "f.yaml")
    with pytest.raises(ConfigError, match=r"key 'nope' is not a params key"):
        check_overlay_keys({"nope": 1}, "f.yaml")
    # a scalar params key cannot take sub-keys
    with pytest.raises(ConfigError, match=r"key 'llm\.model\.x' is not a params key"):
        check_overlay_keys({"llm": {"model": {"x": 1}}}, "f.yaml")


def test_unknown_profile_is_one_line_naming_the_file_and_known_profiles(tmp_path: Path) -> None:
    root = _project(tmp_path, "llm: {seed: 1}\n", "known")
    with pytest.raises(ConfigError) as err:
        load_overlay("missing", root)
    msg = str(err.value)
    assert "\n" not in msg and "missing.yaml" in msg and "known: known" in msg
    with pytest.raises(ConfigError, match="unknown profile"):
        load_overlay("../params", root)


def test_bad_overlay_key_names_the_profile_file(tmp_path: Path) -> None:
    root = _project(tmp_path, "judge:\n  correctnes_model: local/x\n")
    with pytest.raises(ConfigError, match=r"p\.yaml: key 'judge\.correctnes_model' is not"):
        load_overlay("p", root)
    root2 = _project(tmp_path / "b", "[1, 2]\n")
    with pytest.raises(ConfigError, match="non-empty mapping"):
        load_overlay("p", root2)


def test_bad_overlay_value_is_a_params_error_and_leaves_params_untouched(tmp_path: Path) -> None:
    root = _project(tmp_path, "qagen: {thresholds: {answerability: 1.5}}\n")
    before = (root / "params.yaml").read_text()
    with pytest.raises(ParamsError, match=r"p\.yaml: key 'qagen\.thresholds\.answerability'"):
        apply_profile("p", root / "params.yaml", root)
    assert (root / "params.yaml").read_text() == before


def test_apply_writes_values_keeps_comments_and_becomes_active(tmp_path: Path) -> None:
    overlay = (
        "qagen: {filter_model: local/m, thresholds: {answerability: 0.42}}\n"
        "judge: {judges: {llm: {model: local/m}}, udcg: {model: local/m}}\n"
    )
    root = _project(tmp_path, overlay)
    params = root / "params.yaml"
    assert not is_active("p", params, root) and active_profiles(params, root) == []
    changed = apply_profile("p", params, root)
    assert changed == [
        "qagen.filter_model",
        "qagen.thresholds.answerability",
        "judge.judges.llm.model",
        "judge.udcg.model",
    ]
    text = params.read_text()
    assert "# ragcourt parameters" in text and "# P(correct) >= 0.5" in text  # comments kept
    p = load_params(params)
    assert p.qagen.filter_model == "local/m" and p.qagen.thresholds.answerability == 0.42
    assert p.qagen.thresholds.faithfulness == 0.5  # sibling keys of a merged mapping kept
    assert p.judge.judges["llm"].model == "local/m" and p.judge.udcg.model == "local/m"
    assert p.judge.judges["llm"].threshold == 0.5
    assert p.qagen.few_shot_file is None  # null stays null (not an empty string)
    assert yaml.safe_load(text)["qagen"]["few_shot_file"] is None
    assert is_active("p", params, root) and active_profiles(params, root) == ["p"]
    assert apply_profile("p", params, root) == []  # idempotent


def test_shipped_profiles_validate_over_shipped_params() -> None:
    names = profile_names(ROOT)
    assert "offline-quality" in names
    for name in names:
        merged = merged_params(name, ROOT / "params.yaml", ROOT)
        overlay = load_overlay(name, ROOT)
        # the quality profile moves judge roles off the generation model
        if name == "offline-quality":
            judge_model = merged.llm.resolve(merged.judge.udcg.model)
            assert judge_model != merged.llm.model
            base = load_params(ROOT / "params.yaml")
            assert merged.qagen.question_model == base.qagen.question_model
            assert overlay["qagen"]["filter_model"] == judge_model
