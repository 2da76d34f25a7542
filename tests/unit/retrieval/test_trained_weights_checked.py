"""Trained-judge weights are checked on read: a NaN or infinite weight, or a file nested past
any sane depth, is one line naming the file and the command that rebuilds it (never all-NaN
scores with exit 0)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ragcourt.core.errors import ConfigError
from ragcourt.retrieval.trained_judges.judges import WEIGHTS_DIR
from ragcourt.retrieval.trained_judges.pair_model import TRAIN_COMMAND, PairModel


@pytest.mark.parametrize("bad", ["NaN", "Infinity"])
def test_non_finite_weights_are_one_line_naming_the_file(tmp_path: Path, bad: str) -> None:
    shutil.copytree(WEIGHTS_DIR, tmp_path / "w")
    path = tmp_path / "w" / "answerability.json"
    data = json.loads(path.read_text())
    data["coef"][0] = 0.0
    text = json.dumps(data).replace('"coef": [0.0', f'"coef": [{bad}', 1)
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        PairModel.load(path)
    msg = str(err.value)
    assert str(path) in msg and TRAIN_COMMAND in msg and "non-finite" in msg
    assert "\n" not in msg


def test_a_deeply_nested_weights_file_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "relevance.json"
    path.write_text('{"role": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(ConfigError, match=TRAIN_COMMAND):
        PairModel.load(path)
