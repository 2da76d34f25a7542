"""A trained pair judge's weights: standardised features -> a linear model, stored as JSON.

``score(x) = link(intercept + sum_i coef_i * (x_i - mean_i) / scale_i)`` with ``link`` the
logistic function (a probability) or the identity clipped to [0, 1] (a graded score). JSON,
not pickle: loading weights never runs code. Values are rounded to 6 decimals, so a retrain on
the same data writes the same bytes.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ragcourt.core.errors import ConfigError
from ragcourt.core.io import write_text

Role = Literal["relevance", "answerability", "correctness"]
ROLES: tuple[Role, ...] = ("relevance", "answerability", "correctness")
TRAIN_COMMAND = "ragcourt judges train"


class SplitSize(BaseModel):
    """One data split of a training run: where it came from and how many items it holds."""

    model_config = ConfigDict(extra="forbid")

    source: str
    items: int = Field(ge=0)
    positives: int | None = None


class PairModel(BaseModel):
    """Weights and provenance of one trained judge (module docstring)."""

    model_config = ConfigDict(extra="forbid")

    role: Role
    link: Literal["logistic", "clipped_identity"]
    embedders: list[str]  # cosine features, in order, before the lexical ones
    lexical: list[str]  # names of the lexical features, in order
    mean: list[float]
    scale: list[float]
    coef: list[float]
    intercept: float
    threshold: float = Field(ge=0.0, le=1.0)  # decision threshold fitted on training data
    seed: int
    splits: dict[str, SplitSize]
    metrics: dict[str, float]

    @model_validator(mode="after")
    def _widths_agree(self) -> PairModel:
        n = len(self.embedders) + len(self.lexical)
        if not len(self.mean) == len(self.scale) == len(self.coef) == n:
            raise ValueError(f"{len(self.coef)} coefficients for {n} features")
        if any(s <= 0 for s in self.scale):
            raise ValueError("feature scales must be positive")
        numbers = [*self.mean, *self.scale, *self.coef, self.intercept, self.threshold]
        if not all(math.isfinite(v) for v in numbers):
            raise ValueError("weights hold a non-finite number (NaN or infinity)")
        return self

    @property
    def feature_names(self) -> list[str]:
        return [f"cosine_{e}" for e in self.embedders] + list(self.lexical)

    def score(self, features: np.ndarray) -> np.ndarray:
        """Scores in [0, 1] of an (n, n_features) matrix (module docstring)."""
        x = (np.asarray(features, dtype=np.float64) - np.array(self.mean)) / np.array(self.scale)
        # each row's sum rounded once (fsum), not a BLAS product: a pair's score does not depend
        # on the other rows scored with it
        terms = (x * np.array(self.coef)).tolist()
        z = np.array([math.fsum(row) for row in terms], dtype=np.float64) + self.intercept
        if self.link == "logistic":
            return np.asarray(1.0 / (1.0 + np.exp(-z)))
        return np.asarray(np.clip(z, 0.0, 1.0))

    def save(self, path: Path) -> None:
        write_text(self.model_dump_json(indent=1) + "\n", path)

    @classmethod
    def load(cls, path: Path) -> PairModel:
        """The weights at ``path``; missing or invalid: one line naming the command to build
        them."""
        if not path.is_file():
            raise ConfigError(
                f"trained judge weights not found: {path}; build them with `{TRAIN_COMMAND}`"
            )
        try:
            return cls.model_validate(json.loads(path.read_text(encoding="utf-8")))
        except ValidationError as err:
            e = err.errors()[0]
            where = ".".join(str(x) for x in e["loc"]) or "value"
            raise ConfigError(
                f"trained judge weights {path} are invalid ({where}: {e['msg']}); rebuild them "
                f"with `{TRAIN_COMMAND}`"
            ) from None
        except (ValueError, RecursionError) as err:
            first = str(err).splitlines()[0] if str(err) else type(err).__name__
            raise ConfigError(
                f"trained judge weights {path} are invalid ({first}); rebuild them with "
                f"`{TRAIN_COMMAND}`"
            ) from None


def rounded(values: np.ndarray | list[float]) -> list[float]:
    """Floats rounded to 6 decimals (weights that serialise to the same bytes)."""
    return [round(float(v), 6) for v in np.asarray(values, dtype=np.float64).ravel()]
