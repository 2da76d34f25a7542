"""Tolerant reading of the pipeline's artifacts for the report.

:class:`Artifacts` returns ``None`` (and remembers a one-line reason) when a file is absent or
unreadable or fails its schema, instead of raising: the report shows that reason in the section
that needed the file. Names and paths come from the artifact catalog
(:mod:`ragcourt.core.catalog`), relative to ``root``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl
from pydantic import BaseModel, ValidationError

from ragcourt.core import catalog
from ragcourt.core.errors import RagcourtError
from ragcourt.core.io import read_table
from ragcourt.core.schemas import TABLES


def _summary_models() -> dict[str, Callable[[dict[str, Any]], BaseModel]]:
    """The pydantic model each stage writes its summary.json with (shared with the writer)."""
    from ragcourt.answering.summaries import AnswersSummary
    from ragcourt.calibration.stage import CalibrationSummary
    from ragcourt.judging.summaries import JudgeSummary
    from ragcourt.qagen.summaries import parse_qa_summary
    from ragcourt.tournament.summaries import TournamentSummary

    return {
        "qa_summary": parse_qa_summary,
        "answers_summary": AnswersSummary.model_validate,
        "judge_summary": JudgeSummary.model_validate,
        "tournament_summary": TournamentSummary.model_validate,
        "calibration_summary": CalibrationSummary.model_validate,
    }


def _validated(name: str, data: dict[str, Any]) -> dict[str, Any]:
    """``data`` checked against its writer's model (ValidationError when it does not match),
    returned as the model's JSON form; artifacts without a model pass through."""
    model = _summary_models().get(name)
    if model is None:
        return data
    dumped = model(data).model_dump(mode="json")
    return dumped if isinstance(dumped, dict) else data


@dataclass
class Artifacts:
    """Lazy, memoised, tolerant access to the artifacts under ``root``."""

    root: Path
    metrics_dir: str = catalog.DEFAULT_METRICS_DIR  # params.llm.metrics_dir
    problems: dict[str, str] = field(default_factory=dict)
    _tables: dict[str, pl.DataFrame | None] = field(default_factory=dict)
    _jsons: dict[str, dict[str, Any] | None] = field(default_factory=dict)

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

    def json(self, name: str) -> dict[str, Any] | None:
        if name in self._jsons:
            return self._jsons[name]
        rel = catalog.spec(name).template
        path = self.root / rel
        data: dict[str, Any] | None = None
        if not path.is_file():
            self._missing(name, "is missing")
        else:
            try:
                loaded = json.loads(path.read_text(encoding="utf-8"))
                if not isinstance(loaded, dict):
                    self.problems[name] = f"{rel}: expected a JSON object"
                else:
                    data = _validated(name, loaded)
            except (OSError, json.JSONDecodeError) as err:
                self.problems[name] = f"{rel}: unreadable JSON ({err})"
            except ValidationError as err:
                first = err.errors()[0]
                where = ".".join(str(x) for x in first["loc"]) or "(top level)"
                self.problems[name] = (
                    f"{rel}: does not match the summary its stage writes ({where}: {first['msg']})"
                )
        self._jsons[name] = data
        return data

    def note(self, *names: str) -> list[str]:
        """The recorded problems of ``names`` as 'Not available: ...' notes."""
        return [f"Not available: {self.problems[n]}" for n in names if n in self.problems]

    def llm_metrics(self) -> list[dict[str, Any]]:
        """Every ``<metrics_dir>/llm_<stage>.json`` written by the gateway (sorted by name)."""
        folder = self.root / self.metrics_dir
        out: list[dict[str, Any]] = []
        if not folder.is_dir():
            return out
        for f in sorted(folder.glob("llm_*.json")):
            try:
                data = json.loads(f.read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError):
                self.problems[f.name] = f"{f.relative_to(self.root)}: unreadable JSON"
                continue
            if isinstance(data, dict):
                data.setdefault("stage", f.stem.removeprefix("llm_"))
                out.append(data)
        return out
