"""Fuzz of the systems schema: any mapping is accepted or refused with a one-line ConfigError
naming the file; no other exception escapes parse_systems."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragcourt.answering.names import is_system_name
from ragcourt.answering.systems import parse_systems
from ragcourt.core.errors import ConfigError
from ragcourt.orchestration.params import Params, load_params

ROOT = Path(__file__).resolve().parents[3]
PROMPTS = ROOT / "configs" / "prompts"
FIELDS = ["name", "chunking", "embedder", "retriever", "top_k", "fusion", "generator",
          "prompt_version", "max_tokens", "kind"]  # fmt: skip
HOSTILE = st.sampled_from(
    ["", "dense-k3", "../x", "a\nb", "CON", "c256", "minilm", "dense", "bm25", "x" * 101, "A", "a"]
)
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-(10**30), 10**30),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=8), HOSTILE,
)  # fmt: skip
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.one_of(HOSTILE, st.text(max_size=5)), inner, max_size=3),
    ),
    max_leaves=6,
)
SYSTEM = st.dictionaries(st.sampled_from(FIELDS), st.one_of(HOSTILE, VALUES), max_size=6)
DOC = st.fixed_dictionaries(
    {},
    optional={
        "defaults": st.one_of(
            st.dictionaries(st.sampled_from(FIELDS), HOSTILE, max_size=3), VALUES
        ),
        "systems": st.one_of(st.lists(SYSTEM, max_size=4), VALUES),
        "grids": st.one_of(
            st.lists(
                st.fixed_dictionaries(
                    {"factors": st.dictionaries(st.sampled_from(FIELDS), VALUES, max_size=2)}
                ),
                max_size=2,
            ),
            VALUES,
        ),
    },
)


@pytest.fixture(scope="module")
def params() -> Params:
    return load_params(ROOT / "params.yaml")


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(DOC)
def test_fuzz_systems_accepted_or_one_line_config_error(
    params: Params, data: dict[str, Any]
) -> None:
    try:
        systems = parse_systems(data, params, "sys.yaml", check_models=False, prompts_dir=PROMPTS)
    except ConfigError as err:
        msg = str(err)
        assert "\n" not in msg and msg.startswith("sys.yaml"), msg
        return
    names = [s.name for s in systems]
    assert all(is_system_name(n) for n in names)
    assert len({n.casefold() for n in names}) == len(names)
