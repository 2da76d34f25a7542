"""``ragcourt judges train-reader --measure-only`` (``remeasure_card``): measuring the shipped
reader's card again, without training, gives back the card's own metrics and threshold to the
last bit, and the card's SHA-256 is the file's (skipped without the SQuAD2 validation file)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ragcourt.core.fingerprint import hash_file_bytes
from ragcourt.retrieval.reader.build import remeasure_card
from ragcourt.retrieval.reader.model import CARD_FILE, MODEL_FILE, TOKENIZER_FILE, WEIGHTS_DIR

SQUAD2 = Path(__file__).resolve().parents[3] / "shared" / "validation" / "squadv2_train.json"


@pytest.mark.skipif(not SQUAD2.is_file(), reason="no SQuAD2 validation file")
def test_measuring_the_shipped_card_again_gives_its_metrics(tmp_path: Path) -> None:
    from ragcourt.retrieval.trained_judges.squad_data import squad_train_path

    for name in (MODEL_FILE, TOKENIZER_FILE, CARD_FILE):
        shutil.copyfile(WEIGHTS_DIR / name, tmp_path / name)
    card = json.loads((tmp_path / CARD_FILE).read_text(encoding="utf-8"))
    card["sha256"] = "0" * 64  # a stale hash is replaced by the file's
    (tmp_path / CARD_FILE).write_text(json.dumps(card), encoding="utf-8")
    cards = remeasure_card(tmp_path, squad_train_path(), SQUAD2)
    after = json.loads((tmp_path / CARD_FILE).read_text(encoding="utf-8"))
    shipped = json.loads((WEIGHTS_DIR / CARD_FILE).read_text(encoding="utf-8"))
    assert after == cards["after"]
    assert after["sha256"] == hash_file_bytes(tmp_path / MODEL_FILE) == shipped["sha256"]
    assert after["record"]["metrics"] == shipped["record"]["metrics"]
    assert after["threshold"] == shipped["threshold"]
