"""The one-line form of every printed error: control characters visible, text kept as is."""

from __future__ import annotations

import pytest

from ragcourt.core.errors import error_line, one_line


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("plain [/red] text", "plain [/red] text"),
        ("a\nb", "a\\nb"),
        ("a\r\nb\tc", "a\\r\\nb\\tc"),
        ("bell\x07 esc\x1b[31m del\x7f", "bell\\x07 esc\\x1b[31m del\\x7f"),
        ("c1\x85 nel, \u2028 ls, \u2029 ps", "c1\\x85 nel, \\u2028 ls, \\u2029 ps"),
        ("é ü 中 ✓", "é ü 中 ✓"),
    ],
)
def test_one_line_escapes_controls_only(raw: str, shown: str) -> None:
    assert one_line(raw) == shown
    assert len(one_line(raw).splitlines()) == 1


def test_error_line_prefixes_and_escapes() -> None:
    err = ValueError("q[/x]1\nsecond line")
    assert error_line("ragcourt: error:", err) == "ragcourt: error: q[/x]1\\nsecond line"
