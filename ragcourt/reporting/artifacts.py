"""Tolerant, typed reading of the pipeline's artifacts for the report.

:class:`Artifacts` returns ``None`` (and remembers a one-line reason) when a file is absent or
unreadable or fails its schema, instead of raising: the report shows that reason in the section
that needed the file. Tables are schema-checked frames; each stage summary comes back as the
pydantic model its stage writes it with (:meth:`Artifacts.judge_summary`, ...), so a section
reads typed fields. Names and paths come from the artifact catalog
(:mod:`ragcourt.core.catalog`), relative to ``root``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, TypeVar, cast

import polars as pl
from pydantic import ValidationError

from ragcourt.calibration.summaries import CalibrationSummary
from ragcourt.core import catalog
from ragcourt.core.errors import RagcourtError
from ragcourt.core.io import read_table
from ragcourt.core.schemas import TABLES
from ragcourt.judging.summaries import JudgeSummary
from ragcourt.llm.accounting import ModelCounters
from ragcourt.qagen.summaries import ByoQASummary, QASummary, parse_qa_summary
from ragcourt.tournament.summaries import TournamentSummary

S = TypeVar("S")


_COUNTERS = frozenset(f.name for f in fields(ModelCounters))


def _counters(data: Any) -> ModelCounters:
    """The counters of one model in a metrics file (unknown keys ignored, absent ones 0)."""
    items = data.items() if isinstance(data, dict) else ()
    return ModelCounters(**{k: v for k, v in items if k in _COUNTERS})


@dataclass(frozen=True)
class StageCalls:
    """One stage's gateway accounting (``llm_<stage>.json``): per model and in total."""

    stage: str
    models: dict[str, ModelCounters]
    total: ModelCounters
    wall_time_s: float = 0.0  # wall time of the stage's model batches

    @classmethod
    def of(cls, data: dict[str, Any], stage: str) -> StageCalls:
        """A metrics file's contents; ``stage`` when the file does not name one."""
        models = data.get("models") or {}
        wall = data.get("wall_time_s")
        return cls(
            stage=str(data.get("stage", stage)),
            models={str(m): _counters(c) for m, c in models.items()},
            total=_counters(data.get("total")),
            wall_time_s=float(wall) if isinstance(wall, int | float) else 0.0,
        )


@dataclass
class Artifacts:
    """Lazy, memoised, tolerant access to the artifacts under ``root``."""

    root: Path
    metrics_dir: str = catalog.DEFAULT_METRICS_DIR  # params.llm.metrics_dir
    problems: dict[str, str] = field(default_factory=dict)
    _tables: dict[str, pl.DataFrame | None] = field(default_factory=dict)
    _summaries: dict[str, Any] = field(default_factory=dict)

    def path(self, name: str) -> Path:
        return self.root / catalog.path(name)

    def _missing(self, name: str, why: str) -> None:
        art = catalog.spec(name)
        rel, stage = art.template, art.stage
        self.problems[name] = f"{rel} {why} (made by stage '{stage}': `dvc repro {stage}`)"

    def table(self, name: str) -> pl.DataFrame | None:
        if name in self._tables:
            return self._tables[name]
        art = catalog.spec(name)
        schema = art.schema
        df: pl.DataFrame | None = None
        path = self.root / art.template
        if not path.is_file():
            self._missing(name, "is missing")
        else:
            try:
                df = read_table(path, schema if schema in TABLES else None)
            except RagcourtError as err:
                self.problems[name] = str(err)
        self._tables[name] = df
        return df

    def _summary(self, name: str, parse: Callable[[dict[str, Any]], S]) -> S | None:
        """The JSON summary ``name`` validated by ``parse`` (memoised; None with a reason)."""
        if name in self._summaries:
            return cast("S | None", self._summaries[name])
        rel = catalog.spec(name).template
        path = self.root / rel
        data: S | None = None
        if not path.is_file():
            self._missing(name, "is missing")
        else:
            try:
                loaded = json.loads(path.read_text(encoding="utf-8"))
                if not isinstance(loaded, dict):
                    self.problems[name] = f"{rel}: expected a JSON object"
                else:
                    data = parse(loaded)
            except (OSError, json.JSONDecodeError) as err:
                self.problems[name] = f"{rel}: unreadable JSON ({err})"
            except ValidationError as err:
                first = err.errors()[0]
                where = ".".join(str(x) for x in first["loc"]) or "(top level)"
                self.problems[name] = (
                    f"{rel}: does not match the summary its stage writes ({where}: {first['msg']})"
                )
        self._summaries[name] = data
        return data

    def judge_summary(self) -> JudgeSummary | None:
        """``data/judge/summary.json`` (stage ``judge_summary``)."""
        return self._summary("judge_summary", JudgeSummary.model_validate)

    def tournament_summary(self) -> TournamentSummary | None:
        """``data/tournament/summary.json`` (stage ``tournament``)."""
        return self._summary("tournament_summary", TournamentSummary.model_validate)

    def qa_summary(self) -> QASummary | ByoQASummary | None:
        """``data/qa/summary.json`` (stage ``qagen``): generated or bring-your-own."""
        return self._summary("qa_summary", parse_qa_summary)

    def calibration_summary(self) -> CalibrationSummary | None:
        """``data/calibration/summary.json`` (stage ``calibrate``)."""
        return self._summary("calibration_summary", CalibrationSummary.model_validate)

    def note(self, *names: str) -> list[str]:
        """The recorded problems of ``names`` as 'Not available: ...' notes."""
        return [f"Not available: {self.problems[n]}" for n in names if n in self.problems]

    def llm_metrics(self) -> list[StageCalls]:
        """Every ``<metrics_dir>/llm_<stage>.json`` written by the gateway (sorted by name)."""
        folder = self.root / self.metrics_dir
        out: list[StageCalls] = []
        if not folder.is_dir():
            return out
        for f in sorted(folder.glob("llm_*.json")):
            try:
                data = json.loads(f.read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError):
                self.problems[f.name] = f"{f.relative_to(self.root)}: unreadable JSON"
                continue
            if isinstance(data, dict):
                out.append(StageCalls.of(data, f.stem.removeprefix("llm_")))
        return out
