import json
from pathlib import Path

import pytest

from ragcourt.core.errors import ConfigError
from ragcourt.retrieval.trained_judges.squad_data import (
    LabelledPair,
    load_squad2_items,
    load_sts_items,
)


def test_each_items_file_reads_as_labelled_pairs_of_its_kind(tmp_path: Path) -> None:
    squad2 = tmp_path / "squadv2_train.json"
    squad2.write_text(json.dumps([{"question": "Q?", "context": "C.", "answerability": 1}]))
    sts = tmp_path / "sts_train.json"
    sts.write_text(json.dumps([{"sentence1": "a", "sentence2": "b", "similarity": 0.25}]))
    assert load_squad2_items(squad2) == [LabelledPair("Q?", "C.", 1.0, "squad2")]
    assert load_sts_items(sts) == [LabelledPair("a", "b", 0.25, "sts")]


def test_a_file_without_the_keys_is_one_line_naming_the_file_and_what_it_should_be(
    tmp_path: Path,
) -> None:
    bad = tmp_path / "items.json"
    bad.write_text(json.dumps([{"question": "Q?"}]))
    with pytest.raises(ConfigError, match=r"items\.json: not a SQuAD2 items file \(KeyError\)$"):
        load_squad2_items(bad)
    with pytest.raises(ConfigError, match=r"items\.json: not an STS items file \(KeyError\)$"):
        load_sts_items(bad)
