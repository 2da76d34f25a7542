"""The params vocabulary every stage shares: the strict base model, checked string and
timeout types, the :data:`RUNTIME` marker, the ``failure``, ``limits`` and ``scale`` sections
and :class:`CoreView`, the part of the params every stage may read.

The other sections live in the packages that read them (``ragcourt/<layer>/params.py``), the
root in :mod:`ragcourt.orchestration.params`.
"""

from __future__ import annotations

from typing import Annotated, Any, Protocol

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
)

#: ``json_schema_extra`` of a setting that changes how a stage runs, never what it writes
#: (concurrency, timeouts, retries, the reply cache): DVC does not track it
#: (:func:`tracked_keys`), so changing it re-runs nothing
RUNTIME: dict[str, Any] = {"runtime": True}


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    return value


# A string that must say something (a model, a path, a name): empty or blank is an error.
NonEmptyStr = Annotated[str, AfterValidator(_not_blank)]


MAX_TIMEOUT_S = 3600.0
"""Upper bound of every timeout and retry delay (params and systems.yaml): one hour."""


# A timeout: finite, > 0 and at most MAX_TIMEOUT_S (`.inf` or 1e9 would wait forever).
TimeoutS = Annotated[float, Field(gt=0, le=MAX_TIMEOUT_S, allow_inf_nan=False)]


# A delay before a retry: finite, >= 0 and at most MAX_TIMEOUT_S.
DelayS = Annotated[float, Field(ge=0, le=MAX_TIMEOUT_S, allow_inf_nan=False)]


class Strict(BaseModel):
    """Base: unknown keys are errors, values are validated on assignment, floats are finite.
    Integer and boolean fields are ``StrictInt``/``StrictBool``: ``"3"`` or ``true`` for a count
    is refused rather than coerced."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, allow_inf_nan=False)


class FailureParams(Strict):
    """When a stage's failed rows (call errors, unparsable replies) make it fail loudly, after
    writing its outputs (:mod:`ragcourt.core.failures`): more than ``max_error_rate`` of a
    table's rows failed, or (``fail_on_system``) every row of one system failed."""

    max_error_rate: float = Field(default=0.5, ge=0.0, le=1.0)
    fail_on_system: StrictBool = True


class LimitsParams(Strict):
    """Size bounds on what external systems hand the answer stage (docs: troubleshooting,
    Limits). An HTTP reply body over ``http_reply_max_bytes`` is cut off while it streams and
    the question becomes an error row; an answer over ``answer_max_chars`` or a passage over
    ``context_max_chars`` makes that question an error row; identical passages are kept once
    and at most ``contexts_max`` are kept per answer (the first ones, the rest dropped and
    logged). A systems file may declare at most ``max_systems`` systems: a grid's product of
    factor levels is checked before it is expanded."""

    http_reply_max_bytes: StrictInt = Field(default=1_000_000, ge=1_000, le=1_000_000_000)
    answer_max_chars: StrictInt = Field(default=50_000, ge=1, le=100_000_000)
    context_max_chars: StrictInt = Field(default=50_000, ge=1, le=100_000_000)
    contexts_max: StrictInt = Field(default=50, ge=1, le=10_000)
    # systems one systems file may declare, grids expanded (their product is checked first)
    max_systems: StrictInt = Field(default=1_000, ge=1, le=1_000_000)


class ScaleParams(Strict):
    """Sharded stages (docs/guide/scale-out.md): ``embed`` splits each chunks table into blocks
    of ``shard_chunks`` chunks; ``answer`` and ``judge`` split each system's
    questions into blocks of ``shard_questions``, ``judge_retrieval`` the questions into blocks
    of that size; each block is one task with its own Parquet file, merged in block order into
    the tables an unsharded call writes. 0: not sharded (one call, as before).
    ``shard_retries``: times a failed shard task (or one whose worker died) is run again under
    Prefect."""

    shard_questions: StrictInt = Field(default=0, ge=0, le=100_000_000)
    # embed: chunks per shard, rounded up to a multiple of embedders.<e>.stream_chunks (so a
    # shard's batches are the unsharded run's and its vectors the same bytes); 0: not sharded
    shard_chunks: StrictInt = Field(default=0, ge=0, le=1_000_000_000, json_schema_extra=RUNTIME)
    shard_retries: StrictInt = Field(default=2, ge=0, le=100, json_schema_extra=RUNTIME)


class CoreView(Protocol):
    """The params every stage may read. A layer's view (``LLMView``, ``RetrievalView``, ...)
    adds its own sections; the root :class:`ragcourt.orchestration.params.Params` satisfies
    every view, and a stage function takes the view of its layer, not the root."""

    failure: FailureParams
    limits: LimitsParams
    scale: ScaleParams
