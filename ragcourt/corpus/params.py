"""The corpus and chunking sections of ``params.yaml`` (``corpus``, ``chunkings``)."""

from __future__ import annotations

import re
from typing import Protocol

from pydantic import (
    Field,
    StrictInt,
    field_validator,
    model_validator,
)

from ragcourt.core.catalog import (
    DEFAULT_CORPUS_DIR,
)
from ragcourt.core.params import (
    CoreView,
    NonEmptyStr,
    Strict,
    TimeoutS,
)

_EXTENSION_RE = re.compile(r"\.[a-z0-9][a-z0-9_+-]*")


class CorpusParams(Strict):
    """``extensions`` are normalised: lower-cased, a missing leading dot added (``txt`` ->
    ``.txt``). The ``max_*``, ``html_max_depth``, ``file_timeout_s`` and ``parse_memory_mb``
    keys are each file's budget: a file past one is a rejected row naming the key (docs:
    troubleshooting, Limits)."""

    dir: NonEmptyStr = DEFAULT_CORPUS_DIR
    extensions: list[str] = Field(
        default_factory=lambda: [".txt", ".md", ".rst", ".html", ".htm", ".pdf"], min_length=1
    )
    max_file_bytes: StrictInt = Field(default=50_000_000, ge=1_000, le=10_000_000_000)
    max_file_chars: StrictInt = Field(default=10_000_000, ge=1_000, le=1_000_000_000)
    max_pdf_pages: StrictInt = Field(default=5_000, ge=1, le=1_000_000)
    html_max_depth: StrictInt = Field(default=512, ge=16, le=10_000)
    file_timeout_s: TimeoutS = 120.0
    parse_memory_mb: StrictInt = Field(default=2_048, ge=64, le=1_000_000)

    @field_validator("extensions")
    @classmethod
    def _normalise_extensions(cls, value: list[str]) -> list[str]:
        out = []
        for ext in value:
            norm = ext.strip().lower()
            norm = norm if norm.startswith(".") else f".{norm}"
            if not _EXTENSION_RE.fullmatch(norm):
                raise ValueError(f"extension {ext!r} is not a file extension (write e.g. '.txt')")
            out.append(norm)
        return out


class ChunkSpec(Strict):
    """Token-based chunking: ``size`` tokens per chunk with ``overlap`` tokens shared."""

    size: StrictInt = Field(gt=0)
    overlap: StrictInt = Field(ge=0)

    @model_validator(mode="after")
    def _overlap_below_size(self) -> ChunkSpec:
        if self.overlap >= self.size:
            raise ValueError(f"overlap ({self.overlap}) must be smaller than size ({self.size})")
        return self


class CorpusView(CoreView, Protocol):
    """The params ingest and chunking read: the shared ones, ``corpus``, ``chunk_tokenizer``
    and ``chunkings``."""

    corpus: CorpusParams
    chunk_tokenizer: str
    chunkings: dict[str, ChunkSpec]
