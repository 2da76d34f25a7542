"""The root of ``params.yaml``: every section composed, parsed and validated, and the keys DVC
tracks.

Each section's model lives in the package that reads it (``ragcourt/<layer>/params.py``), with
that layer's view: the sections its code may read. :class:`Params` composes them; the CLI, the
stage entry and the Prefect flows call :func:`load_params`, and a wrong key, wrong type or
missing file raises :class:`~ragcourt.core.errors.ParamsError` with a one-line message naming
the file and key. The defaults are the values ``params.yaml`` ships (a unit test holds the two
equal), so a key left out of a user's file means what the demo runs. Role-specific model fields
set to ``null`` fall back to ``llm.model``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from ragcourt.answering.params import ControlsParams
from ragcourt.calibration.params import CalibrationParams
from ragcourt.core.catalog import (
    DEFAULT_PARAMS_FILE,
    DEFAULT_SYSTEMS_FILE,
)
from ragcourt.core.errors import ParamsError
from ragcourt.core.names import case_collision, check_safe_name
from ragcourt.core.params import (
    FailureParams,
    LimitsParams,
    NonEmptyStr,
    ScaleParams,
    Strict,
)
from ragcourt.core.user_yaml import read_user_yaml
from ragcourt.corpus.params import ChunkSpec, CorpusParams
from ragcourt.judging.params import JudgeParams
from ragcourt.llm.params import LLMParams
from ragcourt.qagen.params import QAGenParams
from ragcourt.reporting.params import ReportingView
from ragcourt.retrieval.params import EmbedderSpec, RetrievalParams
from ragcourt.tournament.params import GateParams, RaceParams, TournamentParams

DEFAULT_PARAMS_PATH = Path(DEFAULT_PARAMS_FILE)


class Params(Strict):
    """Root of params.yaml."""

    corpus: CorpusParams = Field(default_factory=CorpusParams)
    chunk_tokenizer: NonEmptyStr = "cl100k_base"
    chunkings: dict[str, ChunkSpec] = Field(
        default_factory=lambda: {
            "c256": ChunkSpec(size=256, overlap=32),
            "c512": ChunkSpec(size=512, overlap=64),
        }
    )
    embedders: dict[str, EmbedderSpec] = Field(
        default_factory=lambda: {"minilm": EmbedderSpec(model="all-minilm-l6-v2")}
    )
    retrieval: RetrievalParams = Field(default_factory=RetrievalParams)
    llm: LLMParams = Field(default_factory=LLMParams)
    qagen: QAGenParams = Field(default_factory=QAGenParams)
    systems_file: NonEmptyStr = DEFAULT_SYSTEMS_FILE
    judge: JudgeParams = Field(default_factory=JudgeParams)
    tournament: TournamentParams = Field(default_factory=TournamentParams)
    calibration: CalibrationParams = Field(default_factory=CalibrationParams)
    failure: FailureParams = Field(default_factory=FailureParams)
    controls: ControlsParams = Field(default_factory=ControlsParams)
    limits: LimitsParams = Field(default_factory=LimitsParams)
    gate: GateParams = Field(default_factory=GateParams)
    race: RaceParams = Field(default_factory=RaceParams)
    scale: ScaleParams = Field(default_factory=ScaleParams)
    #: settings of a project's own stages, by stage name (``stages/<name>/`` declares their
    #: model in ``StageDef.settings``; validated when the stage runs)
    stage_params: dict[str, dict[str, Any]] = Field(default_factory=dict)

    @field_validator("chunkings", "embedders")
    @classmethod
    def _safe_keys(cls, value: dict[str, Any]) -> dict[str, Any]:
        """Keys name files (data/chunks/<key>.parquet) and DVC foreach arguments: safe names."""
        for key in value:
            check_safe_name(key, "key")
        pair = case_collision(value)
        if pair is not None:
            raise ValueError(f"keys {pair[0]!r} and {pair[1]!r} differ only in case")
        return value

    @model_validator(mode="after")
    def _cross_refs(self) -> Params:
        if not self.chunkings:
            raise ValueError("chunkings: at least one chunking is required")
        if not self.embedders:
            raise ValueError("embedders: at least one embedder is required")
        if self.qagen.qa_file is None and self.qagen.reference_chunking not in self.chunkings:
            raise ValueError(
                f"qagen.reference_chunking '{self.qagen.reference_chunking}' "
                f"is not one of chunkings {sorted(self.chunkings)}"
            )
        return self


def _loc_part(part: Any) -> str:
    """One part of a key path, printable on one line (an empty key shows as ``<empty>``)."""
    text = str(part)
    if not text:
        return "<empty>"
    return text if text.isprintable() else text.encode("unicode_escape").decode("ascii")


def _format_validation_error(path: Path, err: ValidationError) -> str:
    """``<file>: key '<dotted.key>': <message>`` on one line."""
    first = err.errors()[0]
    loc = ".".join(_loc_part(p) for p in first["loc"]) or "<root>"
    msg = first["msg"].removeprefix("Value error, ")
    if first["type"] == "extra_forbidden":
        msg = "unknown key"
    msg = " ".join(msg.split())
    more = f" (+{err.error_count() - 1} more)" if err.error_count() > 1 else ""
    return f"{path}: key '{loc}': {msg}{more}"


def parse_params(data: Any, source: Path | str = DEFAULT_PARAMS_PATH) -> Params:
    """Validate an already-loaded mapping; raise ParamsError naming ``source`` and the key."""
    source = Path(source)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ParamsError(f"{source}: top level must be a mapping, got {type(data).__name__}")
    try:
        return Params.model_validate(data)
    except ValidationError as err:
        raise ParamsError(_format_validation_error(source, err)) from None


def load_params(path: Path | str = DEFAULT_PARAMS_PATH) -> Params:
    """Read and validate params.yaml; one-line ParamsError on any problem."""
    path = Path(path)
    if not path.is_file():
        raise ParamsError(f"{path}: params file not found")
    # anchors / aliases refused: a few hundred bytes of aliases can expand into gigabytes
    return parse_params(read_user_yaml(path, ParamsError), path)


def _section(path: str) -> type[BaseModel] | None:
    """The params model at dotted ``path`` of :class:`Params` (None: not a model section,
    e.g. a dict entry like ``chunkings.c256``, a leaf, or an unknown key)."""
    model: type[BaseModel] = Params
    for part in path.split("."):
        field = model.model_fields.get(part)
        annotation = None if field is None else field.annotation
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return None
        model = annotation
    return model


def _is_runtime(model: type[BaseModel], name: str) -> bool:
    extra = model.model_fields[name].json_schema_extra
    return isinstance(extra, dict) and extra.get("runtime") is True


def _has_runtime(model: type[BaseModel]) -> bool:
    """Whether ``model`` or a params section inside it holds a :data:`RUNTIME` setting."""
    for name, field in model.model_fields.items():
        inner = field.annotation
        if _is_runtime(model, name) or (
            isinstance(inner, type) and issubclass(inner, BaseModel) and _has_runtime(inner)
        ):
            return True
    return False


def tracked_keys(
    keys: Iterable[str], present: Callable[[str], bool] | None = None
) -> tuple[str, ...]:
    """The dotted params keys DVC (and the Prefect cache key) track for declared ``keys``: a
    section holding a :data:`RUNTIME` setting becomes its other settings' keys (a section
    inside it likewise), a runtime setting named by itself is left out, and every other key
    is kept as declared. With ``present`` (is this key
    written in the params file?), a section whose other settings are not all written stays
    one key, so a setting added to the file later is still tracked."""
    out: list[str] = []
    for key in keys:
        parent, _, name = key.rpartition(".")
        owner = _section(parent) if parent else Params
        if owner is not None and name in owner.model_fields and _is_runtime(owner, name):
            continue  # a runtime setting named by itself
        model = _section(key)
        if model is None or not _has_runtime(model):
            out.append(key)
            continue
        inner = [f"{key}.{n}" for n in model.model_fields if not _is_runtime(model, n)]
        if present is not None and not all(present(k) for k in inner):
            out.append(key)
            continue
        out.extend(tracked_keys(inner, present))
    return tuple(dict.fromkeys(out))


def _satisfies_every_view(params: Params) -> ReportingView:
    """Type check only: the root is every layer's view (the report's view holds them all)."""
    return params
