from contextvars import ContextVar

import pytest

from ragcourt.core.scoped import scoped

VAR: ContextVar[list[int] | None] = ContextVar("test_scoped_var", default=None)


def test_the_value_holds_inside_the_block_and_the_previous_one_after() -> None:
    outer, inner = [1], [2]
    with scoped(VAR, outer) as got_outer:
        assert got_outer is outer and VAR.get() is outer
        with scoped(VAR, inner) as got_inner:
            assert got_inner is inner and VAR.get() is inner
        assert VAR.get() is outer
    assert VAR.get() is None


def test_the_previous_value_comes_back_when_the_block_raises() -> None:
    with pytest.raises(RuntimeError), scoped(VAR, [3]):
        raise RuntimeError("boom")
    assert VAR.get() is None
