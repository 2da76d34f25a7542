"""Scoring with the shipped trained judges (:mod:`ragcourt.retrieval.trained_judges`).

Each score is a pure function of its text pair: embedder cosines of the two texts (each distinct
text embedded once per call) followed by the lexical features of
:mod:`.text_features`, through the role's :class:`~.pair_model.PairModel`. Text is data here: it
only ever becomes token counts and vectors, so nothing in a passage can address the judge.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import numpy as np

from ragcourt.core.errors import ConfigError
from ragcourt.retrieval.embedders import encode, row_dots, singly
from ragcourt.retrieval.trained_judges.pair_model import TRAIN_COMMAND, PairModel, Role
from ragcourt.retrieval.trained_judges.text_features import (
    ANSWER_REFERENCE_FEATURES,
    QUESTION_PASSAGE_FEATURES,
    IdfTable,
    answer_reference_features,
    question_passage_features,
)

WEIGHTS_DIR = Path(__file__).parent / "weights"
IDF_FILE = "idf.json.gz"


def weights_file(directory: Path, role: Role) -> Path:
    """Where the weights of ``role`` live under ``directory``."""
    return directory / f"{role}.json"


def load_idf(path: Path) -> IdfTable:
    """The IDF table at ``path`` (gzipped JSON ``{"n_docs": N, "idf": {stem: idf}}``)."""
    if not path.is_file():
        raise ConfigError(
            f"trained judge IDF table not found: {path}; build it with `{TRAIN_COMMAND}`"
        )
    try:
        raw = json.loads(gzip.decompress(path.read_bytes()).decode("utf-8"))
        return IdfTable(
            n_docs=int(raw["n_docs"]), idf={str(k): float(v) for k, v in raw["idf"].items()}
        )
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise ConfigError(
            f"trained judge IDF table {path} is invalid ({type(err).__name__}); rebuild it with "
            f"`{TRAIN_COMMAND}`"
        ) from None


def save_idf(table: IdfTable, path: Path) -> None:
    """Gzipped, sorted JSON with a zero mtime: the same table gives the same bytes."""
    from ragcourt.core.io import write_with

    body = json.dumps({"n_docs": table.n_docs, "idf": table.idf}, sort_keys=True).encode()
    data = gzip.compress(body, mtime=0)

    def write(tmp: Path) -> None:
        tmp.write_bytes(data)

    write_with(path, write)


def cosines(embedder: str, left: Sequence[str], right: Sequence[str]) -> np.ndarray:
    """cos(left_i, right_i) under ``embedder`` (L2-normalised vectors), each distinct text
    embedded once, in a batch of its own (:func:`~ragcourt.retrieval.embedders.singly`): a
    pair's score does not depend on the other pairs scored with it (a shard, or all of them)."""
    distinct = sorted(set(left) | set(right))
    if not distinct:
        return np.zeros(0)
    index = {t: i for i, t in enumerate(distinct)}
    with singly():
        vectors = encode(embedder, distinct)
    return row_dots(vectors[[index[t] for t in left]], vectors[[index[t] for t in right]])


def lexical_names(role: Role) -> tuple[str, ...]:
    """The lexical feature names of ``role``: answer-vs-reference for correctness, else
    question-vs-passage."""
    return ANSWER_REFERENCE_FEATURES if role == "correctness" else QUESTION_PASSAGE_FEATURES


def pair_features(
    role: Role,
    embedders: Sequence[str],
    idf: IdfTable,
    left: Sequence[str],
    right: Sequence[str],
) -> np.ndarray:
    """The (n, n_features) matrix of pairs (left_i, right_i) (questions and passages, or
    answers and references): one cosine per embedder, then :func:`lexical_names` of ``role``."""
    if len(left) != len(right):
        raise ValueError(f"{len(left)} left texts for {len(right)} right texts")
    cols = [cosines(e, left, right) for e in embedders]
    lexical_of = answer_reference_features if role == "correctness" else question_passage_features
    lex = np.array([lexical_of(a, b, idf) for a, b in zip(left, right, strict=True)])
    lex = lex.reshape(len(left), len(lexical_names(role)))
    return np.column_stack([*cols, lex]) if cols else lex


@dataclass
class TrainedJudges:
    """The three trained judges of one weights folder, each loaded on first use."""

    directory: Path = WEIGHTS_DIR
    _models: dict[Role, PairModel] = field(default_factory=dict, repr=False)
    _idf: IdfTable | None = field(default=None, repr=False)

    def model(self, role: Role) -> PairModel:
        if role not in self._models:
            path = weights_file(self.directory, role)
            model = PairModel.load(path)
            if model.role != role or tuple(model.lexical) != lexical_names(role):
                raise ConfigError(
                    f"trained judge weights {path} were built for other features; rebuild them "
                    f"with `{TRAIN_COMMAND}`"
                )
            self._models[role] = model
        return self._models[role]

    @property
    def idf(self) -> IdfTable:
        if self._idf is None:
            self._idf = load_idf(self.directory / IDF_FILE)
        return self._idf

    def scores(self, role: Role, left: Sequence[str], right: Sequence[str]) -> list[float]:
        """Scores in [0, 1] for pairs (left_i, right_i) under ``role``."""
        if not left and not right:
            return []
        model = self.model(role)
        x = pair_features(role, model.embedders, self.idf, left, right)
        return [float(s) for s in model.score(x)]

    def relevance(self, questions: Sequence[str], passages: Sequence[str]) -> list[float]:
        """P(relevant) per (question, passage)."""
        return self.scores("relevance", questions, passages)

    def answerability(self, questions: Sequence[str], contexts: Sequence[str]) -> list[float]:
        """P(answerable from the context alone) per (question, context)."""
        return self.scores("answerability", questions, contexts)

    def correctness(self, answers: Sequence[str], references: Sequence[str]) -> list[float]:
        """Correctness score in [0, 1] per (answer, reference)."""
        return self.scores("correctness", answers, references)


@cache
def shipped_judges(directory: str = str(WEIGHTS_DIR)) -> TrainedJudges:
    """The judges of ``directory`` (default: the weights shipped in the package), shared by the
    callers of one process."""
    return TrainedJudges(Path(directory))
