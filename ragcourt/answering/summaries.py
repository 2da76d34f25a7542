"""The shape of ``data/answers/summary.json``: per system, what answering cost and gave.

Written as ``AnswersSummary.model_dump(mode="json")`` (``{system: {...}}``); pure pydantic so
readers (the report) need not import the answering code.
"""

from __future__ import annotations

import polars as pl
from pydantic import BaseModel, ConfigDict, RootModel


class SystemAnswerSummary(BaseModel):
    """One system's answer rows: ``answered`` = rows without error, ``abstained`` = answered
    rows that abstained, ``abstention_rate`` = abstained / answered (0.0 when none),
    ``cached`` = rows whose answer call was replayed from the reply cache,
    ``mean_latency_s`` over the rows with a measured latency (not cached; 0.0 when none),
    ``latency_rows`` = how many, token sums over all rows."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    questions: int
    answered: int
    abstained: int
    errors: int
    abstention_rate: float
    mean_latency_s: float
    prompt_tokens: int
    completion_tokens: int
    cached: int = 0
    latency_rows: int = 0


class AnswersSummary(RootModel[dict[str, SystemAnswerSummary]]):
    """``{system name: SystemAnswerSummary}`` in config order."""

    model_config = ConfigDict(strict=True, frozen=True)


def _mean(values: pl.Series) -> float:
    """The column mean as a float; 0.0 for an empty or all-null column (or a mean of 0)."""
    m = values.mean()
    return float(m) if isinstance(m, int | float) and m else 0.0


def summarise(answers: pl.DataFrame) -> AnswersSummary:
    """Per system (in row order): questions, answered, abstained, errors, abstention rate,
    cached rows, mean latency of the rows not replayed from the cache, tokens."""
    out: dict[str, SystemAnswerSummary] = {}
    for (name,), df in answers.group_by("system", maintain_order=True):
        ok = df.filter(pl.col("error").is_null())
        replayed = pl.col("cached").fill_null(False) if "cached" in df.columns else pl.lit(False)
        not_cached = df.filter(~replayed)
        measured = not_cached.filter(pl.col("latency_s").is_not_null())
        out[str(name)] = SystemAnswerSummary(
            questions=df.height,
            answered=ok.height,
            abstained=int(ok["abstained"].sum() or 0),
            errors=df.height - ok.height,
            abstention_rate=_mean(ok["abstained"]) if ok.height else 0.0,
            mean_latency_s=_mean(measured["latency_s"]),
            cached=df.height - not_cached.height,
            latency_rows=measured.height,
            prompt_tokens=int(df["prompt_tokens"].sum()),
            completion_tokens=int(df["completion_tokens"].sum()),
        )
    return AnswersSummary(out)
