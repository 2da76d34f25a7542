"""Both leaderboard plots (the report's and the tournament stage's PNG) mark the run's rating
origin, ``tournament.initial_elo``, not a fixed 1500."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest
from matplotlib.axes import Axes

from ragcourt.reporting import plots
from ragcourt.tournament.stage import plot_leaderboard


def _board() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "system": ["a", "b"],
            "rank": [1, 2],
            "control": [None, None],
            "elo": [1020.0, 980.0],
            "elo_lo": [1000.0, 960.0],
            "elo_hi": [1040.0, 1000.0],
            "bt": [1010.0, 990.0],
            "bt_lo": [1000.0, 980.0],
            "bt_hi": [1020.0, 1000.0],
        }
    )


@pytest.fixture()
def vertical_lines(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The x of every ``axvline`` drawn (the real method still draws it)."""
    seen: list[float] = []
    real = Axes.axvline

    def spy(self: Axes, x: float = 0, *args: Any, **kwargs: Any) -> Any:
        seen.append(float(x))
        return real(self, x, *args, **kwargs)

    monkeypatch.setattr(Axes, "axvline", spy)
    return seen


def test_report_leaderboard_plot_marks_the_rating_origin(vertical_lines: list[float]) -> None:
    figure = plots.leaderboard(_board(), origin=1000.0)
    assert figure.png_base64
    assert 1000.0 in vertical_lines
    assert 1500.0 not in vertical_lines


def test_stage_leaderboard_png_marks_the_rating_origin(
    vertical_lines: list[float], tmp_path: Path
) -> None:
    path = tmp_path / "leaderboard.png"
    plot_leaderboard(_board(), path, origin=1000.0)
    assert path.stat().st_size > 0
    assert vertical_lines[0] == 1000.0
    assert 1500.0 not in vertical_lines
