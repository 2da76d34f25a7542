"""The trained judges' lexical features are the same bytes whatever the process's string hash
seed: a feature that sums IDF weights over a set of words must not depend on the order the set
is iterated in (two runs of a stage gave scores 2e-16 apart before)."""

from __future__ import annotations

import os
import subprocess
import sys

CODE = """
from ragcourt.retrieval.trained_judges.judges import shipped_judges
from ragcourt.retrieval.trained_judges.text_features import (
    answer_reference_features,
    question_passage_features,
)
idf = shipped_judges().idf
passage = (
    "The Louisiana Purchase of 1803 doubled the size of the young republic. Thomas Jefferson "
    "sent Robert Livingston and James Monroe to Paris, where they bought the territory from "
    "Napoleon for fifteen million dollars, securing the port of New Orleans and the Mississippi."
)
questions = [
    "Which envoys did Jefferson send to Paris to negotiate the territory purchase?",
    "How many million dollars did the republic pay Napoleon for the Louisiana territory?",
    "What port on the Mississippi was secured by the purchase of 1803 from France?",
]
rows = [question_passage_features(q, passage, idf) for q in questions]
rows += [answer_reference_features(q, passage, idf) for q in questions]
print(repr(rows))
"""


def _features(seed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    out = subprocess.run(
        [sys.executable, "-c", CODE], env=env, capture_output=True, text=True, check=True
    )
    return out.stdout


def test_lexical_features_do_not_depend_on_the_hash_seed() -> None:
    first = _features("1")
    assert first.startswith("[[")
    for seed in ("2", "3", "4", "5"):
        assert _features(seed) == first, seed
