"""Params hardening: safe chunking/embedder keys, finite bounded
numbers, non-empty strings and lists, strict ints/bools, normalised extensions; every refusal
is a one-line ParamsError naming the key. Each defect test says what the old code did."""

from __future__ import annotations

import copy
import math
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel
from typer.testing import CliRunner

from ragcourt.core.errors import ParamsError
from ragcourt.orchestration.params import Params, load_params, parse_params

ROOT = Path(__file__).resolve().parents[3]
DEMO: dict[str, Any] = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))


def with_value(dotted: str, value: Any) -> dict[str, Any]:
    """The demo params with ``dotted`` set to ``value``."""
    data = copy.deepcopy(DEMO)
    *parents, last = dotted.split(".")
    node = data
    for part in parents:
        node = node.setdefault(part, {})
    node[last] = value
    return data


def refused(data: Any, key: str) -> str:
    """The ParamsError message for ``data``; asserts it is one line naming ``key``."""
    with pytest.raises(ParamsError) as info:
        parse_params(data, "params.yaml")
    msg = str(info.value)
    assert "\n" not in msg
    assert key in msg, msg
    return msg


def test_demo_params_load_unchanged() -> None:
    p = load_params(ROOT / "params.yaml")
    assert p.corpus.extensions == [".txt", ".md", ".rst", ".html", ".htm", ".pdf"]
    assert sorted(p.chunkings) == ["c256", "c512"] and p.qagen.n_items == 12
    assert p.tournament.k_factor == 32.0 and p.tournament.initial_elo == 1500.0


# ---- (1) chunkings / embedders keys reach file paths and DVC commands


@pytest.mark.parametrize("bad", ["c1; touch pwned; true", "c1$(touch pwned)", "../../../x", "CON"])
@pytest.mark.parametrize("section", ["chunkings", "embedders"])
def test_hostile_keys_refused(section: str, bad: str) -> None:
    """Old code accepted any key: DVC ran ``touch`` / wrote outside data/."""
    data = copy.deepcopy(DEMO)
    spec = next(iter(data[section].values()))
    data[section][bad] = spec
    msg = refused(data, section)
    assert f"key {bad!r} is not a safe name" in msg or "reserved device name" in msg


def test_keys_differing_only_in_case_refused() -> None:
    data = copy.deepcopy(DEMO)
    data["chunkings"]["C256"] = data["chunkings"]["c256"] | {"size": 300}
    assert "differ only in case" in refused(data, "chunkings")


def test_cli_run_refuses_hostile_key_before_dvc(tmp_path: Path, monkeypatch: Any) -> None:
    """Old ``ragcourt run`` started ``dvc repro`` without loading params, so DVC interpolated
    the key into a stage ``cmd`` (where ``$(...)`` runs even inside double quotes)."""
    from ragcourt.cli.main import app

    data = copy.deepcopy(DEMO)
    data["chunkings"]["c1$(touch pwned)"] = {"size": 64, "overlap": 0}
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    (tmp_path / "dvc.yaml").write_text((ROOT / "dvc.yaml").read_text(encoding="utf-8"))
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(app, ["run"])
    assert res.exit_code == 2, res.output
    assert "chunkings" in res.output and "not a safe name" in res.output
    assert not (tmp_path / "pwned").exists()


# ---- (6) params gaps


def test_concurrency_per_model_zero_refused() -> None:
    """Old code accepted 0: the gateway then waited forever on a zero-slot semaphore."""
    refused(with_value("llm.concurrency_per_model", {"local/": 0}), "llm.concurrency_per_model")


def test_empty_ks_refused() -> None:
    """Old code accepted ``ks: []`` and retrieval_eval raised a raw TypeError."""
    refused(with_value("retrieval.ks", []), "retrieval.ks")


def test_non_positive_ks_refused() -> None:
    """Old code accepted ``[0, -3]`` and failed later without naming the key."""
    refused(with_value("retrieval.ks", [0, -3]), "retrieval.ks.0")


def test_empty_retrievers_refused() -> None:
    """Old code accepted ``retrievers: []`` and failed later without naming the key."""
    refused(with_value("retrieval.retrievers", []), "retrieval.retrievers")


@pytest.mark.parametrize("key", ["tournament.initial_elo", "tournament.k_factor"])
@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite_elo_settings_refused(key: str, value: float) -> None:
    """Old code accepted NaN/inf (a NaN ranked the losing system first)."""
    refused(with_value(key, value), key)


def test_yaml_nan_refused(tmp_path: Path) -> None:
    path = tmp_path / "params.yaml"
    path.write_text(
        (ROOT / "params.yaml").read_text(encoding="utf-8").replace("k_factor: 32", "k_factor: .nan")
    )
    with pytest.raises(ParamsError, match=r"key 'tournament\.k_factor'"):
        load_params(path)


@pytest.mark.parametrize("key", ["llm.model", "llm.cache_dir", "llm.models_file", "corpus.dir"])
@pytest.mark.parametrize("value", ["", "   "])
def test_empty_strings_refused(key: str, value: str) -> None:
    """Old code accepted ``llm.model: ""`` and ``cache_dir: ""``."""
    assert "must not be empty" in refused(with_value(key, value), key)


def test_extensions_normalised() -> None:
    """Old code kept ``"txt"`` (no dot) and then rejected every file of the corpus."""
    p = parse_params(with_value("corpus.extensions", ["txt", ".MD", "Html"]))
    assert p.corpus.extensions == [".txt", ".md", ".html"]


@pytest.mark.parametrize("bad", [[""], ["."], ["t xt"], ["a/b"], []])
def test_bad_extensions_refused(bad: list[str]) -> None:
    refused(with_value("corpus.extensions", bad), "corpus.extensions")


@pytest.mark.parametrize("value", ["3", True, 3.0])
def test_n_items_not_coerced(value: Any) -> None:
    """Old code coerced ``"3"`` and ``true`` (-> 1) silently."""
    refused(with_value("qagen.n_items", value), "qagen.n_items")


def test_bool_not_coerced() -> None:
    refused(with_value("llm.cache", "yes"), "llm.cache")


def test_huge_numbers_refused() -> None:
    refused(with_value("llm.concurrency", 10**30), "llm.concurrency")
    refused(with_value("tournament.initial_elo", 1e300), "tournament.initial_elo")


# ---- fuzz: anything is accepted or refused with a one-line ParamsError naming a key


def _leaves(model: type[BaseModel], prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out = []
    for name, field in model.model_fields.items():
        ann = field.annotation
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            out.extend(_leaves(ann, (*prefix, name)))
        else:
            out.append((*prefix, name))
    return out


LEAVES = _leaves(Params)
TOP_KEYS = set(Params.model_fields)
HOSTILE = st.sampled_from(
    ["", " ", "c1; touch pwned; true", "../../../x", "a\nb", "CON", "$(id)", "c256", "minilm"]
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**40), max_value=10**40),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    HOSTILE,
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(HOSTILE, st.text(max_size=6)), inner, max_size=3),
    ),
    max_leaves=8,
)
SPECS = st.fixed_dictionaries({"size": st.integers(1, 600), "overlap": st.integers(0, 40)})
EMBEDDERS = st.fixed_dictionaries({"model": st.one_of(HOSTILE, st.text(max_size=8))})


@st.composite
def params_dicts(draw: st.DrawFn) -> dict[str, Any]:
    data = copy.deepcopy(DEMO) if draw(st.booleans()) else {}
    for path in draw(st.lists(st.sampled_from(LEAVES), max_size=4)):
        node = data
        for part in path[:-1]:
            if not isinstance(node.get(part), dict):
                node[part] = {}
            node = node[part]
        node[path[-1]] = draw(VALUES)
    if draw(st.booleans()):
        section = draw(st.sampled_from(["chunkings", "embedders"]))
        key = draw(st.one_of(HOSTILE, st.text(max_size=10)))
        spec = draw(SPECS if section == "chunkings" else EMBEDDERS)
        data.setdefault(section, {}) if isinstance(data.get(section), dict) else None
        if isinstance(data.get(section), dict):
            data[section][key] = spec
    if draw(st.booleans()):
        data[draw(st.text(max_size=6))] = draw(SCALARS)
    return data


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(params_dicts())
def test_fuzz_params_accepted_or_one_line_error(data: dict[str, Any]) -> None:
    try:
        p = parse_params(data, "params.yaml")
    except ParamsError as err:
        msg = str(err)
        assert "\n" not in msg, msg
        m = re.match(r"params\.yaml: key '(.+)': ", msg)
        assert m, msg
        if m.group(1) == "<root>":
            assert any(k in msg for k in TOP_KEYS), msg
        return
    for value in (p.tournament.k_factor, p.tournament.initial_elo, p.llm.timeout_s):
        assert math.isfinite(value)
    assert p.retrieval.ks and all(k >= 1 for k in p.retrieval.ks)
    assert all(v >= 1 for v in p.llm.concurrency_per_model.values())
