"""The one safe-name rule (ragcourt.core.names) and its use for system names."""

from __future__ import annotations

import pytest

from ragcourt.answering.names import check_system_name, is_system_name
from ragcourt.core.names import case_collision, check_safe_name, is_safe_name


@pytest.mark.parametrize(
    "name", ["c256", "c512", "minilm", "all-mpnet-base-v2", "a.b_c-d", "0", "x" * 64, "con1"]
)
def test_safe_names_accepted(name: str) -> None:
    assert is_safe_name(name)
    assert check_safe_name(name, "key") == name


@pytest.mark.parametrize(
    "name",
    [
        "", "c1; touch pwned; true", "c1$(touch pwned)", "../../../x", "a/b", "a\\b", ".hidden",
        "-rf", "_x", "c1\n", "c1 ", "a..b", "x" * 65, "CON", "nul", "Aux.txt", "com1", "LPT9.md",
        "é", "c1\x00",
    ],
)  # fmt: skip
def test_unsafe_names_refused_with_one_line_message(name: str) -> None:
    assert not is_safe_name(name)
    with pytest.raises(ValueError) as info:
        check_safe_name(name, "key")
    assert "\n" not in str(info.value) and str(info.value).startswith(f"key {name!r}")


def test_trailing_newline_refused() -> None:
    """Old code used ``re.match`` with ``$``, which accepts ``'name\\n'``."""
    assert not is_system_name("dense-k3\n")
    with pytest.raises(ValueError, match="system name"):
        check_system_name("dense-k3\n")


def test_system_names_keep_their_length_limit() -> None:
    """System names were valid up to 100 characters; that is unchanged."""
    assert is_system_name("s" * 100) and not is_system_name("s" * 101)
    assert check_system_name("dense-k3-fusion4") == "dense-k3-fusion4"


def test_case_collision() -> None:
    assert case_collision(["c256", "c512"]) is None
    assert case_collision(["C256", "c512", "c256"]) == ("C256", "c256")
    assert case_collision(["a", "a"]) is None  # exact duplicates are another check's job
